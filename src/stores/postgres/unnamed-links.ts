/**
 * Links that name no organization (a bare secret, mailed before links named theirs): found by one
 * probe of (tenant_id, token_hash) per organization, a cost that follows the number of
 * organizations. Such a link can be live only until the last row written before the upgrade
 * expires; the migration keeps that time (table unnamed_links_until, schema 54), and
 * after it, or in a database that never had such rows, a bare secret is unknown without a query.
 */
import type { PgQueries } from "./database";

/**
 * Whether a link naming no organization may still be live at `now`. The time is read once (only
 * the migration and copy-to-postgres write it, before any instance serves); a failed read is
 * retried on the next call.
 */
export function unnamedLinksWindow(pg: PgQueries): (now: number) => Promise<boolean> {
  let until: Promise<number> | null = null;
  return async (now) => {
    until ??= pg.one<{ until: number | null }>`SELECT max(until) AS until FROM unnamed_links_until`.then((r) => r?.until ?? 0);
    try {
      return now < (await until);
    } catch (e) {
      until = null;
      throw e;
    }
  };
}

/**
 * copy-to-postgres's AFTER_COPY step: the copied links cannot be told apart (only their hashes are
 * kept), so any of them may be a bare secret; the probe stays on until the last one expires.
 */
export const unnamedLinksAfterCopy = {
  name: "unnamed_links_until (how long a link mailed without its organization can be live)",
  run: async (tx: PgQueries): Promise<void> => {
    await tx.unsafe(`DELETE FROM unnamed_links_until`);
    await tx.unsafe(`INSERT INTO unnamed_links_until (until)
      SELECT e FROM (SELECT max(e) AS e FROM (SELECT max(expires_at) AS e FROM magic_links
        UNION ALL SELECT max(expires_at) FROM account_tokens UNION ALL SELECT max(expires_at) FROM invitations) x) y WHERE e IS NOT NULL`);
  },
};
