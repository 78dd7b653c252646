import type { Db } from "../db/database";
import { newId } from "../db/ids";

/** A mail to be written to the outbox, in the same transaction as the token its link carries. */
export interface OutgoingMail {
  tenantId: string | null;
  kind: string;
  recipient: string;
  subject: string;
  text: string;
  html: string;
  /** The one link the mail carries (shown by `suite mail list` while the mail is pending). */
  link: string | null;
}

export interface OutboxRow {
  id: string;
  tenant_id: string | null;
  kind: string;
  recipient: string;
  subject: string;
  text_body: string | null;
  html_body: string | null;
  link: string | null;
  status: "pending" | "sending" | "sent" | "failed";
  attempts: number;
  next_attempt_at: number;
  locked_until: number | null;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
}

/** SQL of the mail outbox. Every statement is prepared once. */
export function createMailRepo(db: Db) {
  const insert = db.prepare<never, [string, string | null, string, string, string, string, string, string | null, number]>(
    `INSERT INTO mail_outbox (id, tenant_id, kind, recipient, subject, text_body, html_body, link, status, next_attempt_at, created_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'pending', ?9, ?9)`,
  );
  const list = db.prepare<OutboxRow, [number]>("SELECT * FROM mail_outbox ORDER BY created_at DESC, id DESC LIMIT ?1");
  const byId = db.prepare<OutboxRow, [string]>("SELECT * FROM mail_outbox WHERE id = ?1");

  return {
    /** Call inside the caller's writeTx; answers the outbox row's id. */
    enqueueInTx(m: OutgoingMail, now: number): string {
      const id = newId();
      insert.run(id, m.tenantId, m.kind, m.recipient, m.subject, m.text, m.html, m.link, now);
      return id;
    },
    list: async (limit = 100) => list.all(limit),
    byId: async (id: string) => byId.get(id),
  };
}

export type MailRepo = ReturnType<typeof createMailRepo>;
