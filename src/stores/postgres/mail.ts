import { type MailStore, backlogOf } from "../../mail/repo";
import { newId } from "../../kernel/ids";
import type { OutboxRow, OutgoingMail } from "../../mail/repo";
import type { Pg, PgTx } from "./database";
import { type OutboxSeal, isSealed } from "../../mail/outbox-seal";

/** What the stores that mail a link need of the mail store: the outbox row, in their transaction. */
export interface PgEnqueueInTx {
  enqueueInTx(tx: PgTx, m: OutgoingMail, now: number): Promise<string>;
}

/**
 * The mail outbox on PostgreSQL, shared by every instance. The outbox is the one queue every
 * tenant's mail goes through, so the sender's statements read across tenants by design; nothing
 * here is ever shown to a tenant.
 */
export function createPostgresMailStore(pg: Pg, seal: OutboxSeal) {
  const store = {
    /** Call inside the caller's transaction; answers the outbox row's id. */
    async enqueueInTx(tx: PgTx, m: OutgoingMail, now: number): Promise<string> {
      const id = newId();
      // Sealed (mail/outbox-seal.ts): a copy of the database (pg_dump, a base backup) holds no usable link.
      const sealed = seal.seal(id, m);
      await tx.run`INSERT INTO mail_outbox (id, tenant_id, kind, recipient, subject, text_body, html_body, link, status, next_attempt_at, created_at)
                   VALUES (${id}, ${m.tenantId}::text, ${m.kind}, ${m.recipient}, ${m.subject}, ${sealed.text}, ${sealed.html}, ${sealed.link}::text,
                           'pending', ${now}::bigint, ${now}::bigint)`;
      return id;
    },
    enqueue: (m: OutgoingMail, now: number) => pg.begin((tx) => store.enqueueInTx(tx, m, now)),
    list: async (limit = 100) => (await pg.all<OutboxRow>`SELECT * FROM mail_outbox ORDER BY created_at DESC, id DESC LIMIT ${limit}`).map(seal.open),
    byId: async (id: string) => {
      const row = await pg.one<OutboxRow>`SELECT * FROM mail_outbox WHERE id = ${id}`;
      return row ? seal.open(row) : null;
    },
    /**
     * Takes up to `limit` due rows for one sender, leased until `lockedUntil`. Several instances
     * claim at once: FOR UPDATE SKIP LOCKED lets each take rows no other claim holds, and a row
     * another claim changed meanwhile is checked again against the condition after its lock, so a
     * row is never handed to two senders. A row left `sending` past its lease was claimed by a
     * sender that died (SIGKILL mid-send); the attempt is counted at claim time, so a mail that
     * crashes its sender cannot loop forever.
     */
    claimDue: async (now: number, lockedUntil: number, limit: number) =>
      (await pg.all<OutboxRow>`
        WITH due AS (
          SELECT id FROM mail_outbox
           WHERE next_attempt_at <= ${now}::bigint
             AND (status = 'pending' OR (status = 'sending' AND locked_until <= ${now}::bigint))
           ORDER BY created_at, id
           LIMIT ${limit}
           FOR UPDATE SKIP LOCKED)
        UPDATE mail_outbox m SET status = 'sending', locked_until = ${lockedUntil}::bigint, attempts = m.attempts + 1
          FROM due WHERE m.id = due.id
        RETURNING m.*`).map(seal.open),
    // The link is a live credential: once delivered (or given up on) it leaves the database.
    markSent: async (id: string, now: number) =>
      (await pg.run`UPDATE mail_outbox SET status = 'sent', sent_at = ${now}::bigint, locked_until = NULL, last_error = NULL,
                      text_body = NULL, html_body = NULL, link = NULL
                    WHERE id = ${id} AND status = 'sending'`) === 1,
    markRetry: async (id: string, nextAttemptAt: number, error: string) =>
      (await pg.run`UPDATE mail_outbox SET status = 'pending', next_attempt_at = ${nextAttemptAt}::bigint, locked_until = NULL, last_error = ${error}
                    WHERE id = ${id} AND status = 'sending'`) === 1,
    markFailed: async (id: string, error: string) =>
      (await pg.run`UPDATE mail_outbox SET status = 'failed', locked_until = NULL, last_error = ${error},
                      text_body = NULL, html_body = NULL, link = NULL
                    WHERE id = ${id} AND status = 'sending'`) === 1,
    /** Extends the lease of rows a live sender still holds; answers how many it extended. */
    renewLeases: async (ids: string[], lockedUntil: number) =>
      ids.length === 0
        ? 0
        : pg.run`UPDATE mail_outbox SET locked_until = ${lockedUntil}::bigint WHERE status = 'sending' AND id = ANY(${pg.sql.array(ids, "text")})`,
    /** Gives a claimed row back unsent (a sender stopping), without counting the attempt. */
    release: async (id: string) =>
      (await pg.run`UPDATE mail_outbox SET status = 'pending', locked_until = NULL, attempts = attempts - 1 WHERE id = ${id} AND status = 'sending'`) === 1,
    /** When the earliest pending row falls due or the earliest lease lapses; null when idle. */
    nextDueAt: async () =>
      (
        await pg.one<{ at: number | null }>`
          SELECT LEAST((SELECT MIN(next_attempt_at) FROM mail_outbox WHERE status = 'pending'),
                       (SELECT MIN(locked_until) FROM mail_outbox WHERE status = 'sending')) AS at`
      )?.at ?? null,
    /** Deletes sent and failed mail created before `before`; answers how many. */
    purgeFinished: async (before: number) => pg.run`DELETE FROM mail_outbox WHERE created_at < ${before}::bigint AND status IN ('sent', 'failed')`,
    backlog: async () =>
      backlogOf(await pg.all<{ status: string; n: number; oldest: number | null }>`
        SELECT status, count(*)::int AS n, min(created_at) AS oldest FROM mail_outbox WHERE status IN ('pending', 'sending', 'failed') GROUP BY status`),
  };
  return store satisfies MailStore;
}

export type PostgresMailStore = ReturnType<typeof createPostgresMailStore>;

/**
 * Seals the unsent rows an earlier release left clear, at start (after the key check), under a
 * row lock so that two instances starting together seal each row once. Answers how many.
 */
export async function sealClearOutboxPostgres(pg: Pg, seal: OutboxSeal): Promise<number> {
  return pg.begin(async (tx) => {
    const rows = await tx.all<{ id: string; text_body: string | null; html_body: string | null; link: string | null }>`
      SELECT id, text_body, html_body, link FROM mail_outbox WHERE status IN ('pending', 'sending') FOR UPDATE`;
    let sealed = 0;
    for (const r of rows) {
      if (isSealed(r.text_body) && isSealed(r.html_body) && isSealed(r.link)) continue;
      await tx.run`UPDATE mail_outbox SET text_body = ${seal.sealStored(r.text_body, r.id)}::text, html_body = ${seal.sealStored(r.html_body, r.id)}::text,
                     link = ${seal.sealStored(r.link, r.id)}::text WHERE id = ${r.id}`;
      sealed++;
    }
    return sealed;
  });
}

