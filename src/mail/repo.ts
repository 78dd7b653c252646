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

/** The store of the mail outbox. */
export interface MailStore {
  /** One mail on its own (no other write goes with it: the operator console's test mail); answers its id. */
  enqueue: (m: OutgoingMail, now: number) => Promise<string>;
  list: (limit?: number) => Promise<OutboxRow[]>;
  byId: (id: string) => Promise<OutboxRow | null>;
  /** Takes up to `limit` due rows for one sender, leased until `lockedUntil`. */
  claimDue: (now: number, lockedUntil: number, limit: number) => Promise<OutboxRow[]>;
  markSent: (id: string, now: number) => Promise<boolean>;
  markRetry: (id: string, nextAttemptAt: number, error: string) => Promise<boolean>;
  markFailed: (id: string, error: string) => Promise<boolean>;
  /** Extends the lease of rows a live sender still holds; answers how many it extended. */
  renewLeases: (ids: string[], lockedUntil: number) => Promise<number>;
  /** Gives a claimed row back unsent (a sender stopping), without counting the attempt. */
  release: (id: string) => Promise<boolean>;
  /** When the earliest pending row falls due or the earliest lease lapses; null when idle. */
  nextDueAt: () => Promise<number | null>;
  /** Deletes sent and failed mail created before `before`; answers how many. */
  purgeFinished: (before: number) => Promise<number>;
  /** What the metrics show: rows waiting, being sent and given up on, and the oldest waiting row's creation. */
  backlog: () => Promise<OutboxBacklog>;
}

export interface OutboxBacklog {
  pending: number;
  sending: number;
  failed: number;
  /** created_at of the oldest pending row; null when none waits. */
  oldestPendingAt: number | null;
}

/** The backlog's rows (one per status present) as the store interface answers them. */
export function backlogOf(rows: { status: string; n: number; oldest: number | null }[]): OutboxBacklog {
  const of = (status: string) => rows.find((r) => r.status === status);
  return { pending: Number(of("pending")?.n ?? 0), sending: Number(of("sending")?.n ?? 0), failed: Number(of("failed")?.n ?? 0), oldestPendingAt: of("pending")?.oldest == null ? null : Number(of("pending")!.oldest) };
}
