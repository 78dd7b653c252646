import { type Db, writeTx } from "../../db/database";
import type { SeedResult, SeedTenant } from "../../crm/seed-store";
import { setDemoPassword, startSeed } from "./bulk-load";

/** Deals per transaction on the live path: short enough that a server's writes never wait long. */
const BATCH = 1_000;
/** Milliseconds between batches, so that a waiting writer (a server's) takes the lock in between. */
const GAP_MS = 2;

/**
 * Seeds a database that other connections have open (a running server): through the live indexes
 * and triggers, in short transactions with a pause between them, printing progress. When a batch
 * fails, everything this seed wrote is taken out again before the error is passed on.
 */
export async function liveSeed(db: Db, t: SeedTenant, now: number, progress: (done: number, total: number) => void): Promise<SeedResult> {
  db.run("PRAGMA analysis_limit = 2000");
  const plan = writeTx(db, () => {
    const p = startSeed(db, t, now);
    setDemoPassword(db, t);
    return p;
  });
  let done = 0;
  let shown = 0;
  try {
    while (done < t.deals) {
      const to = Math.min(t.deals, done + BATCH);
      writeTx(db, () => plan.insertDeals(done, to));
      done = to;
      if (done - shown >= Math.max(BATCH, t.deals / 10) || done === t.deals) {
        progress(done, t.deals);
        shown = done;
      }
      await Bun.sleep(GAP_MS);
    }
  } catch (e) {
    await unseed(db, t.tenantId, plan.range[0], plan.range[0] + done, plan.added);
    throw e;
  }
  db.run("ANALYZE deals");
  return plan.result;
}

/** Deletes, in short transactions, the deals of [from, to) of the seed's range and the rows it added. */
async function unseed(db: Db, tenantId: string, from: number, to: number, added: { users: string[]; accounts: string[]; contacts: string[] }): Promise<void> {
  const deals = db.prepare("DELETE FROM deals WHERE tenant_id = ?1 AND seq >= ?2 AND seq < ?3");
  for (let lo = from; lo < to; lo += BATCH) {
    writeTx(db, () => deals.run(tenantId, lo, Math.min(to, lo + BATCH)));
    await Bun.sleep(GAP_MS);
  }
  const byId = (table: string, ids: string[]) => {
    const del = db.prepare(`DELETE FROM ${table} WHERE tenant_id = ?1 AND id = ?2`);
    writeTx(db, () => {
      for (const id of ids) del.run(tenantId, id);
    });
  };
  byId("contacts", added.contacts);
  byId("accounts", added.accounts);
  byId("users", added.users);
}

/**
 * Removes an organization the seed created, with everything in it (its rows cascade), and its
 * audit rows: a seed that fails leaves no organization behind. Deals first, in short transactions.
 */
export async function removeSeededTenant(db: Db, tenantId: string): Promise<void> {
  const del = db.prepare("DELETE FROM deals WHERE seq IN (SELECT seq FROM deals WHERE tenant_id = ?1 LIMIT ?2)");
  while (writeTx(db, () => del.run(tenantId, BATCH).changes) > 0) await Bun.sleep(GAP_MS);
  writeTx(db, () => {
    db.run("DELETE FROM audit_log WHERE tenant_id = ?1", [tenantId]);
    db.run("DELETE FROM tenants WHERE id = ?1", [tenantId]);
  });
}
