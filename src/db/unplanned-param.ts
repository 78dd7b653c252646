/**
 * A bound parameter the query planner does not look at: `(SELECT ?)`, evaluated once a run.
 *
 * The SQLite inside Bun (3.54) prepares a statement again before every run whose WHERE compares a
 * column with a parameter in an ordered query, or whose LIMIT is a parameter, so as to plan with the
 * values (SQLITE_DBCONFIG_ENABLE_QPSG would stop it; bun:sqlite cannot set it). A small statement
 * pays microseconds; the deals export's statement, thousands of opcodes (its CSV cells), paid 6 ms
 * a run before its first row. Indexes are still searched by the subquery's value (EXPLAIN QUERY PLAN:
 * `tenant_id=? AND (created_at,id)<(?,?)`).
 */
export const unplannedParam = (n?: number): string => (n === undefined ? "(SELECT ?)" : `(SELECT ?${n})`);

/** `count` of them, comma-separated (an IN list). */
export const unplannedParams = (count: number): string => Array.from({ length: count }, () => unplannedParam()).join(", ");
