import { isUniqueViolation as isSqliteUniqueViolation } from "../db/database";

/**
 * Whether `e` is a unique-constraint violation from the backend that runs, so that a service can
 * answer 409 without knowing which one: `column` as SQLite names it ("tenants.subdomain").
 * A PostgreSQL check joins here with the PostgreSQL stores.
 */
export const isUniqueViolation = (e: unknown, column?: string): boolean => isSqliteUniqueViolation(e, column);
