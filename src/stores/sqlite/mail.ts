import { type MailStore, type OutgoingMail, type OutboxRow, backlogOf } from "../../mail/repo";
import { type Db, writeTx, writeTxAsync } from "../../db/database";
import { newId } from "../../kernel/ids";
import { type OutboxSeal, isSealed } from "../../mail/outbox-seal";

/**
 * SQL of the mail outbox. Every statement is prepared once. Bodies and links are kept sealed
 * (mail/outbox-seal.ts): sealed on insert, opened on every read.
 */
export function createSqliteMailStore(db: Db, seal: OutboxSeal) {
  const insert = db.prepare<never, [string, string | null, string, string, string, string, string, string | null, number]>(
    `INSERT INTO mail_outbox (id, tenant_id, kind, recipient, subject, text_body, html_body, link, status, next_attempt_at, created_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'pending', ?9, ?9)`,
  );
  const list = db.prepare<OutboxRow, [number]>("SELECT * FROM mail_outbox ORDER BY created_at DESC, id DESC LIMIT ?1");
  const byId = db.prepare<OutboxRow, [string]>("SELECT * FROM mail_outbox WHERE id = ?1");
  // The outbox is the one queue every tenant's mail goes through, so the sender's statements
  // read across tenants by design; nothing here is ever shown to a tenant.
  // Claim and lease in one statement: two senders (or a sender and a restarted one) can never
  // both take a row. A row left `sending` past its lease was claimed by a sender that died.
  // The attempt is counted at claim time, so a mail that crashes its sender cannot loop forever.
  const claim = db.prepare<OutboxRow, [number, number, number]>(
    `UPDATE mail_outbox SET status = 'sending', locked_until = ?2, attempts = attempts + 1
     WHERE id IN (
       SELECT id FROM mail_outbox WHERE status = 'pending' AND next_attempt_at <= ?1
       UNION ALL
       SELECT id FROM mail_outbox WHERE status = 'sending' AND next_attempt_at <= ?1 AND locked_until <= ?1
       LIMIT ?3)
     RETURNING *`,
  );
  // The link is a live credential: once delivered (or given up on) it leaves the database.
  const markSent = db.prepare<never, [string, number]>(
    `UPDATE mail_outbox SET status = 'sent', sent_at = ?2, locked_until = NULL, last_error = NULL,
       text_body = NULL, html_body = NULL, link = NULL
     WHERE id = ?1 AND status = 'sending'`,
  );
  const markRetry = db.prepare<never, [string, number, string]>(
    `UPDATE mail_outbox SET status = 'pending', next_attempt_at = ?2, locked_until = NULL, last_error = ?3
     WHERE id = ?1 AND status = 'sending'`,
  );
  const markFailed = db.prepare<never, [string, string]>(
    `UPDATE mail_outbox SET status = 'failed', locked_until = NULL, last_error = ?2,
       text_body = NULL, html_body = NULL, link = NULL
     WHERE id = ?1 AND status = 'sending'`,
  );
  const renew = db.prepare<never, [string, number]>(
    "UPDATE mail_outbox SET locked_until = ?2 WHERE status = 'sending' AND id IN (SELECT value FROM json_each(?1))",
  );
  const release = db.prepare<never, [string]>(
    "UPDATE mail_outbox SET status = 'pending', locked_until = NULL, attempts = attempts - 1 WHERE id = ?1 AND status = 'sending'",
  );
  const nextDue = db.prepare<{ at: number | null }, []>(
    `SELECT MIN(at) AS at FROM (
       SELECT MIN(next_attempt_at) AS at FROM mail_outbox WHERE status = 'pending'
       UNION ALL
       SELECT MIN(locked_until) AS at FROM mail_outbox WHERE status = 'sending')`,
  );
  const purgeFinished = db.prepare<never, [number]>("DELETE FROM mail_outbox WHERE created_at < ?1 AND status IN ('sent', 'failed')");

  // Sent rows are left out: they are most of the table until purged, and no alert needs their count.
  const backlog = db.prepare<{ status: string; n: number; oldest: number | null }, []>(
    "SELECT status, count(*) AS n, min(created_at) AS oldest FROM mail_outbox WHERE status IN ('pending', 'sending', 'failed') GROUP BY status",
  );
  const store = {
    /** Call inside the caller's writeTx; answers the outbox row's id. */
    enqueueInTx(m: OutgoingMail, now: number): string {
      const id = newId();
      const sealed = seal.seal(id, m);
      insert.run(id, m.tenantId, m.kind, m.recipient, m.subject, sealed.text, sealed.html, sealed.link, now);
      return id;
    },
    // Looked up on the store at call time, as every store that writes mail does.
    enqueue: async (m: OutgoingMail, now: number) => writeTxAsync(db, () => store.enqueueInTx(m, now)),
    list: async (limit = 100) => list.all(limit).map(seal.open),
    byId: async (id: string) => {
      const row = byId.get(id);
      return row ? seal.open(row) : null;
    },
    /** Takes up to `limit` due rows for one sender, leased until `lockedUntil`. */
    claimDue: async (now: number, lockedUntil: number, limit: number) => (await writeTxAsync(db, () => claim.all(now, lockedUntil, limit))).map(seal.open),
    markSent: async (id: string, now: number) => writeTxAsync(db, () => markSent.run(id, now).changes === 1),
    markRetry: async (id: string, nextAttemptAt: number, error: string) => writeTxAsync(db, () => markRetry.run(id, nextAttemptAt, error).changes === 1),
    markFailed: async (id: string, error: string) => writeTxAsync(db, () => markFailed.run(id, error).changes === 1),
    /** Extends the lease of rows a live sender still holds; answers how many it extended. */
    renewLeases: async (ids: string[], lockedUntil: number) => (ids.length === 0 ? 0 : writeTxAsync(db, () => renew.run(JSON.stringify(ids), lockedUntil).changes)),
    /** Gives a claimed row back unsent (a sender stopping), without counting the attempt. */
    release: async (id: string) => writeTxAsync(db, () => release.run(id).changes === 1),
    /** When the earliest pending row falls due or the earliest lease lapses; null when idle. */
    nextDueAt: async () => nextDue.get()?.at ?? null,
    /** Deletes sent and failed mail created before `before`; answers how many. */
    purgeFinished: async (before: number) => writeTxAsync(db, () => purgeFinished.run(before).changes),
    backlog: async () => backlogOf(backlog.all()),
  };
  return store satisfies MailStore;
}

export type SqliteMailStore = ReturnType<typeof createSqliteMailStore>;

/**
 * Seals the unsent rows an earlier release left clear (run before a migration copies the file to
 * `.v<N>.bak`, and on a backup's copy), with secure_delete so the clear bytes leave the file's
 * pages. Few rows (unsent mail), so one transaction. Answers how many it sealed.
 */
export function sealClearOutbox(db: Db, seal: OutboxSeal): number {
  const hasTable = db.query("SELECT 1 AS x FROM sqlite_schema WHERE type = 'table' AND name = 'mail_outbox'").get() !== null;
  if (!hasTable) return 0;
  const was = (db.query("PRAGMA secure_delete").get() as { secure_delete: number }).secure_delete;
  db.run("PRAGMA secure_delete = ON");
  try {
    return writeTx(db, () => {
      const rows = db
        .query("SELECT id, text_body, html_body, link FROM mail_outbox WHERE status IN ('pending', 'sending')")
        .all() as Array<{ id: string; text_body: string | null; html_body: string | null; link: string | null }>;
      let sealed = 0;
      for (const r of rows) {
        if (isSealed(r.text_body) && isSealed(r.html_body) && isSealed(r.link)) continue;
        db.run("UPDATE mail_outbox SET text_body = ?2, html_body = ?3, link = ?4 WHERE id = ?1", [
          r.id, seal.sealStored(r.text_body, r.id), seal.sealStored(r.html_body, r.id), seal.sealStored(r.link, r.id),
        ]);
        sealed++;
      }
      return sealed;
    });
  } finally {
    db.run(`PRAGMA secure_delete = ${was}`);
  }
}

