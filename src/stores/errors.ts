import { isUniqueViolation as isSqliteUniqueViolation } from "../db/database";
import { isPgUniqueViolation } from "./postgres/database";

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
