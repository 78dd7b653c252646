import { SQL } from "bun";

/**
 * One row as the stores see it. Bun's SQL client has no type parsers: int8 comes back as a string,
 * or as a BigInt with `bigint: true`. The stores ask for BigInt and turn each into a number here,
 * so that a row has the same shape on PostgreSQL as on SQLite (times are epoch milliseconds, far
 * inside 2^53).
 */
type Row = Record<string, unknown>;

function numbers<T>(rows: Row[]): T[] {
  for (const row of rows) {
    for (const key in row) {
      const v = row[key];
      if (typeof v === "bigint") row[key] = Number(v);
    }
  }
  return rows as T[];
}

type Values = unknown[];

/** Queries on the pool or inside one transaction: the same calls either way. */
export interface PgQueries {
  /** Every row. */
  all<T = Row>(strings: TemplateStringsArray, ...values: Values): Promise<T[]>;
  /** The first row, or null. */
  one<T = Row>(strings: TemplateStringsArray, ...values: Values): Promise<T | null>;
  /** A write: how many rows it changed. */
  run(strings: TemplateStringsArray, ...values: Values): Promise<number>;
  /** Text built at run time with $1… parameters (DDL, generated column lists). Never user text. */
  unsafe<T = Row>(text: string, params?: Values): Promise<T[]>;
  /** The raw Bun SQL handle, for what the helpers above do not cover (sql.array, sql(obj), COPY). */
  readonly sql: SQL;
}

/** A transaction's handle: stores that write across features take it and pass it on. */
export type PgTx = PgQueries & { readonly inTransaction: true };

export interface Pg extends PgQueries {
  /** Runs `fn` in one transaction (BEGIN … COMMIT; ROLLBACK when it throws). */
  begin<T>(fn: (tx: PgTx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  readonly url: string;
}

function queries(sql: SQL): PgQueries {
  return {
    sql,
    all: async <T>(s: TemplateStringsArray, ...v: Values) => numbers<T>(await sql(s, ...v)),
    one: async <T>(s: TemplateStringsArray, ...v: Values) => numbers<T>(await sql(s, ...v))[0] ?? null,
    run: async (s: TemplateStringsArray, ...v: Values) => ((await sql(s, ...v)) as { count: number }).count,
    unsafe: async <T>(text: string, params: Values = []) => numbers<T>(await sql.unsafe(text, params)),
  };
}

/** Opens a pool on `url` (postgres://…). Connections open lazily, on the first query. */
export function openPostgres(url: string, opts: { max?: number } = {}): Pg {
  const sql = new SQL(url, { max: opts.max ?? 10, bigint: true, idleTimeout: 30 });
  return {
    ...queries(sql),
    url,
    begin: <T>(fn: (tx: PgTx) => Promise<T>) => sql.begin((tx) => fn({ ...queries(tx as unknown as SQL), inTransaction: true })) as Promise<T>,
    close: () => sql.close(),
  };
}

/** Whether `e` is PostgreSQL refusing a duplicate (23505), on `constraint` when one is named. */
export const isPgUniqueViolation = (e: unknown, constraint?: string): boolean => {
  const err = e as { errno?: unknown; code?: unknown; constraint?: unknown; message?: unknown };
  const unique = err?.errno === "23505" || err?.code === "23505" || (typeof err?.message === "string" && /duplicate key value/.test(err.message));
  return unique && (constraint === undefined || String(err.constraint ?? err.message).includes(constraint));
};
