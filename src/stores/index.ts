import type { Config } from "../config";
import type { Db } from "../db/database";
import type { Stores, StoresOptions } from "./interface";
import type { Pg } from "./postgres/database";

/** The PostgreSQL pool type, for the context's test seam (ctx.pg). */
export type { Pg };
import { openPostgresStores } from "./postgres";
import { openSqliteStores } from "./sqlite";

/**
 * Opens the configured backend's stores: PostgreSQL when a database URL is set (SUITE_DATABASE_URL,
 * --database-url), else SQLite in config.db. Synchronous on both: PostgreSQL's migration runs
 * behind a gate every query waits for (see postgres/index.ts), and ping() answers whether it worked.
 */
export function openStores(config: Config, opts: StoresOptions = {}): Stores & { db?: Db; pg?: Pg } {
  const url = config.databaseUrl;
  if (url && !opts.db) {
    const { stores, pg } = openPostgresStores(config, url, { before: opts.pgBefore });
    return { ...stores, pg };
  }
  return openSqliteStores(config, opts);
}
