import type { Logger } from "../kernel/logger";
import type { MailStore, OutboxRow } from "./repo";
import { type MailTransport, scrubSmtpError } from "./smtp";

export interface DeliveryPolicy {
  /** How long a claimed row stays a sender's; past it, the row is someone else's to retry. */
  leaseMs: number;
  /** How often a sender extends the lease of the rows it still holds (well under leaseMs). */
  renewMs: number;
  /** After this many attempts the row is `failed`. */
  maxAttempts: number;
  /** The wait before attempt n + 1, after n failed attempts. */
  backoffMs: (attempts: number) => number;
  /** How often the outbox is looked at when no one kicks the sender. */
  pollMs: number;
  /** Rows taken per claim. */
  batch: number;
}

/**
 * 30 s, 1 min, 2 min ... up to an hour between attempts; given up after 10 (about 3 hours).
 * A short lease, renewed while the sender lives: a killed server's claimed mail goes out within
 * 10 s of its death instead of minutes, and a live sender (a slow SMTP send, or another server on
 * the same file) keeps its rows for as long as it works on them.
 */
export const DEFAULT_POLICY: DeliveryPolicy = {
  leaseMs: 10_000,
  renewMs: 2_000,
  maxAttempts: 10,
  backoffMs: (attempts) => Math.min(30_000 * 2 ** Math.max(0, attempts - 1), 60 * 60_000),
  pollMs: 15_000,
  batch: 10,
};

export interface MailSenderDeps {
  repo: MailStore;
  transport: MailTransport;
  from: string;
  now: () => number;
  log: Logger;
  /** Secrets the transport's errors might echo (the SMTP password), removed before logging. */
  secrets?: string[];
  policy?: Partial<DeliveryPolicy>;
}

/**
 * Delivers the outbox. One pass at a time claims due rows with a lease, sends them, and marks
 * each sent (bodies and link cleared), due again later (backoff), or failed. Runs on a timer,
 * and at once when kicked after a commit, so a sign-in link does not wait for the next poll.
 */
export function createMailSender(d: MailSenderDeps) {
  const policy: DeliveryPolicy = { ...DEFAULT_POLICY, ...d.policy };
  let running = false;
  let stopped = true;
  let stopping = false;
  let again = false;
  let current: Promise<void> | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  // Claimed rows not yet sent, deferred or handed back, and the timer that renews their lease.
  const held = new Set<string>();
  let renewer: ReturnType<typeof setInterval> | null = null;

  function hold(ids: string[]): void {
    for (const id of ids) held.add(id);
    if (renewer || held.size === 0) return;
    renewer = setInterval(() => {
      // A busy or closed database: the next tick tries again, and the lease is still running.
      void d.repo.renewLeases([...held], d.now() + policy.leaseMs).catch(() => {});
    }, policy.renewMs);
    renewer.unref?.();
  }

  function letGo(id: string): void {
    held.delete(id);
    if (held.size === 0) stopRenewing();
  }

  function stopRenewing(): void {
    if (renewer) clearInterval(renewer);
    renewer = null;
  }

  async function deliver(row: OutboxRow): Promise<void> {
    if (row.text_body === null && row.html_body === null) {
      // Sealed under keys this server does not have (mail/outbox-seal.ts): sending ciphertext helps nobody.
      const error = "the mail's sealed body cannot be opened with this server's keys (the key file changed since it was written); ask for a new link";
      await d.repo.markFailed(row.id, error);
      d.log({ level: "error", msg: "mail failed", mail_id: row.id, kind: row.kind, status: "failed", attempts: row.attempts, error });
      return;
    }
    try {
      await d.transport.sendMail({ from: d.from, to: row.recipient, subject: row.subject, text: row.text_body ?? "", html: row.html_body ?? "" });
    } catch (e) {
      const error = scrubSmtpError(e, d.secrets ?? []);
      if (row.attempts >= policy.maxAttempts) {
        await d.repo.markFailed(row.id, error);
        d.log({ level: "error", msg: "mail failed", mail_id: row.id, kind: row.kind, status: "failed", attempts: row.attempts, error });
      } else {
        const retryAt = d.now() + policy.backoffMs(row.attempts);
        await d.repo.markRetry(row.id, retryAt, error);
        d.log({ level: "warn", msg: "mail deferred", mail_id: row.id, kind: row.kind, status: "pending", attempts: row.attempts, retry_at: new Date(retryAt).toISOString(), error });
      }
      return;
    }
    await d.repo.markSent(row.id, d.now());
    d.log({ level: "info", msg: "mail sent", mail_id: row.id, kind: row.kind, status: "sent", attempts: row.attempts });
  }

  /** Claims and sends until nothing is due; answers how many rows it handled. */
  async function drain(): Promise<number> {
    let handled = 0;
    for (;;) {
      const now = d.now();
      const rows = await d.repo.claimDue(now, now + policy.leaseMs, policy.batch);
      if (rows.length === 0) return handled;
      hold(rows.map((r) => r.id));
      try {
        // One at a time: a transactional mail stream is small, and one SMTP connection is polite.
        for (const [i, row] of rows.entries()) {
          if (stopping) {
            // Shutting down: hand the rest back untouched rather than hold them for a lease.
            for (const left of rows.slice(i)) await d.repo.release(left.id);
            return handled;
          }
          await deliver(row);
          letGo(row.id);
          handled++;
        }
      } finally {
        for (const row of rows) letGo(row.id);
      }
    }
  }

  /** Wakes when the next retry falls due, or after the poll interval (another process's mail). */
  async function schedule(): Promise<void> {
    if (stopped) return;
    const due = await d.repo.nextDueAt().catch(() => null);
    const wait = due === null ? policy.pollMs : Math.min(policy.pollMs, Math.max(50, due - d.now()));
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      kick();
    }, wait);
    timer.unref?.();
  }

  /** Runs a pass now, or right after the one under way (which may have missed the new row). */
  function kick(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    current = (async () => {
      do {
        again = false;
        try {
          await drain();
        } catch (e) {
          // A closed or busy database: the rows keep their lease and are retried later.
          d.log({ level: "error", msg: "mail pass failed", error: e instanceof Error ? e.message : String(e) });
        }
      } while (again && !stopped);
      running = false;
      await schedule();
    })();
  }

  return {
    enabled: true as const,
    /** Starts delivering: rows left pending (or leased by a dead sender) go out now. */
    start(): void {
      if (!stopped) return;
      stopped = false;
      stopping = false;
      kick();
    },
    kick,
    /** One pass, for the command line and tests; does not need start(). */
    drain,
    /**
     * Stops the timer and waits (a few seconds at most, inside serve's stop deadline) for the
     * send under way; a send cut short keeps its lease, no longer renewed, and is retried once
     * it lapses.
     */
    async stop(graceMs = 5_000): Promise<void> {
      stopped = true;
      stopping = true;
      if (timer) clearTimeout(timer);
      timer = null;
      let grace: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([current, new Promise<void>((resolve) => (grace = setTimeout(resolve, graceMs)))]);
      clearTimeout(grace);
      stopRenewing();
      d.transport.close?.();
    },
  };
}

export type MailSender = ReturnType<typeof createMailSender>;

/** Without SUITE_SMTP_URL: mail stays in the outbox for `suite mail list`. */
export const noMailSender = {
  enabled: false as const,
  start(): void {},
  kick(): void {},
  drain: async (): Promise<number> => 0,
  stop: async (_graceMs?: number): Promise<void> => {},
};

export type Mailer = MailSender | typeof noMailSender;
