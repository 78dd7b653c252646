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
  /**
   * The pool's load for the metrics: statements and transactions started on it and not yet ended
   * (each holds a connection while it runs, or waits for one past `max`), and its size.
   */
  pool(): { inFlight: number; max: number };
}

function queries(sql: SQL, gate: () => Promise<void> | null): PgQueries {
  // Every call first waits for the gate (the schema's migration) when there is one still open.
  const wait = async () => {
    const g = gate();
    if (g) await g;
  };
  return {
    sql,
    all: async <T>(s: TemplateStringsArray, ...v: Values) => (await wait(), numbers<T>(await sql(s, ...v))),
    one: async <T>(s: TemplateStringsArray, ...v: Values) => (await wait(), numbers<T>(await sql(s, ...v))[0] ?? null),
    run: async (s: TemplateStringsArray, ...v: Values) => (await wait(), ((await sql(s, ...v)) as { count: number }).count),
    unsafe: async <T>(text: string, params: Values = []) => (await wait(), numbers<T>(await sql.unsafe(text, params))),
  };
}

/** The application_name of this process's connections. */
export const ownApplicationName = (): string => `workspace-suite:${process.pid}`;

export interface PgOptions {
  max?: number;
  /**
   * A promise every query waits for first (src/stores/postgres/index.ts: the migration, run on a
   * connection of its own). It lets the stores be built synchronously, as createContext is, while
   * no query reaches a database that is not ready; when it rejects, every query rejects with it.
   */
  ready?: Promise<void>;
}

/** Opens a pool on `url` (postgres://…). Connections open lazily, on the first query. */
export function openPostgres(url: string, opts: PgOptions = {}): Pg {
  // Named after this process, so that a session can tell its own pool's connections from others'
  // (the seed's "is the database mine alone?"; pg_stat_activity for an operator). Bun opens the
  // pool's connections all at once, at its first query.
  const max = opts.max ?? 10;
  const sql = new SQL(url, { max, bigint: true, idleTimeout: 30, connection: { application_name: ownApplicationName() } });
  let ready: Promise<void> | null = opts.ready ?? null;
  // Once it has resolved, queries stop awaiting it (one microtask less per query).
  ready?.then(() => void (ready = null), () => {});
  const gate = () => ready;
  // A counter around each pool-level call: two integer writes, no timer, no allocation but the closure's.
  let inFlight = 0;
  const counted =
    <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      inFlight++;
      try {
        return await f(...a);
      } finally {
        inFlight--;
      }
    };
  const q = queries(sql, gate);
  return {
    sql,
    all: counted(q.all) as PgQueries["all"],
    one: counted(q.one) as PgQueries["one"],
    run: counted(q.run),
    unsafe: counted(q.unsafe) as PgQueries["unsafe"],
    url,
    begin: counted(async <T>(fn: (tx: PgTx) => Promise<T>) => {
      if (ready) await ready;
      return sql.begin((tx) => fn({ ...queries(tx as unknown as SQL, () => null), inTransaction: true })) as Promise<T>;
    }) as Pg["begin"],
    close: () => sql.close(),
    pool: () => ({ inFlight, max }),
  };
}

/** Inserts rows given as JSON objects named like the columns (one parameter, any number of rows). */
export async function insertJson(tx: PgQueries, table: string, rows: object[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.unsafe(`INSERT INTO ${table} SELECT * FROM json_populate_recordset(NULL::${table}, $1::text::json) ON CONFLICT DO NOTHING`, [JSON.stringify(rows)]);
}

/**
 * The rows of `table` in every organization that `where` names, found by one probe of the table's
 * (tenant_id, …) key per organization: how a lookup that names no organization (a sign-in without
 * a tenant, a link mailed before links named theirs) reads a table keyed by organization, with no
 * index on the other columns alone (a distributed database could not keep one). The inner LIMIT
 * keeps the planner from turning the LATERAL into a join over the whole table (`where` must name a
 * whole key after tenant_id: at most one row an organization). `COLLATE "default"`: tenants.id is
 * "C", the tenant_id columns are not, and compared as "C" the key cannot be probed by tenant
 * (10,000 organizations: 10.5 s, against 31 ms). The probed row is `x`, its organization `t`.
 */
export const inEveryTenant = (table: string, where: string, select = "x.*"): string =>
  `SELECT ${select} FROM tenants t CROSS JOIN LATERAL (SELECT * FROM ${table} WHERE tenant_id = t.id COLLATE "default" AND ${where} LIMIT 1) x`;
