// A duplicate refused by either backend, told apart by the error alone: services answer 409 without
// knowing which database runs, and each backend's stores use their own predicate.

/** Whether `e` is SQLite refusing a duplicate, on `column` ("table.column") when one is named. */
export const isSqliteUniqueViolation = (e: unknown, column?: string): boolean =>
  e instanceof Error && /UNIQUE constraint failed/.test(e.message) && (column === undefined || e.message.includes(column));

/** Whether `e` is PostgreSQL refusing a duplicate (23505), on `constraint` when one is named. */
export const isPgUniqueViolation = (e: unknown, constraint?: string): boolean => {
  const err = e as { errno?: unknown; code?: unknown; constraint?: unknown; message?: unknown };
  const unique = err?.errno === "23505" || err?.code === "23505" || (typeof err?.message === "string" && /duplicate key value/.test(err.message));
  return unique && (constraint === undefined || String(err.constraint ?? err.message).includes(constraint));
};

/** The columns of PostgreSQL's "Key (tenant_id, subdomain)=(…) already exists." detail. */
const keyColumns = (detail: unknown): string[] => {
  const m = typeof detail === "string" ? /^Key \(([^)]*)\)=/.exec(detail) : null;
  return m ? m[1]!.split(",").map((c) => c.trim().replace(/^"|"$/g, "")) : [];
};

/** PostgreSQL's 23505, on `table.column` when one is named (its table, and the key naming that column). */
function isPostgresUniqueViolation(e: unknown, column?: string): boolean {
  if (!isPgUniqueViolation(e)) return false;
  if (column === undefined) return true;
  const [table, col] = column.split(".");
  const err = e as { table?: unknown; detail?: unknown; constraint?: unknown };
  if (err.table !== undefined && err.table !== table) return false;
  return keyColumns(err.detail).includes(col!) || (typeof err.constraint === "string" && err.constraint.includes(`${table}_${col}`));
}

/**
 * Whether `e` is a unique-constraint violation from the backend that runs, so that a service can
 * answer 409 without knowing which one: `column` as SQLite names it ("tenants.subdomain"), matched
 * on PostgreSQL against the violated key's table and columns.
 */
export const isUniqueViolation = (e: unknown, column?: string): boolean => isSqliteUniqueViolation(e, column) || isPostgresUniqueViolation(e, column);
