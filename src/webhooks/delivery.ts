import { Webhook } from "standardwebhooks";
import type { Logger } from "../kernel/logger";
import { toIso } from "../kernel/ids";
import { eventId } from "../events/repo";
import { type GuardedFetch, OutboundError } from "../outbound/guard";
import type { Sealer } from "../security/secret-box";
import type { AttemptEnd, AttemptResult, DeliveryRow, DisabledNotice, EndpointDisable, LeasedDelivery, WebhooksStore } from "./repo";
import type { OutgoingMail } from "../mail/repo";

/** What the sender may change (tests shorten every time; the defaults are the documented ones). */
export interface DeliverySettings {
  /** A whole attempt, connection and answer: 10 s. */
  timeoutMs: number;
  /** The first retry comes after about this long; each next one four times later, up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Retries go on this long from a delivery's first attempt (three days), then the endpoint is disabled. */
  retryWindowMs: number;
  /** How often the sender looks for due deliveries when nothing wakes it. */
  pollMs: number;
  /** Attempts at once to one endpoint, and in all, per process. */
  perEndpoint: number;
  total: number;
}

export const DEFAULT_DELIVERY_SETTINGS: DeliverySettings = {
  timeoutMs: 10_000,
  backoffMs: 5_000,
  maxBackoffMs: 6 * 3_600_000,
  retryWindowMs: 3 * 86_400_000,
  pollMs: 1_000,
  perEndpoint: 4,
  total: 16,
};

/** The request body's limit: an event bigger than this is not sent (it fails at once). */
export const MAX_BODY_BYTES = 256 * 1024;
/** Only the status matters; a receiver's answer is read up to this much and dropped. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface DeliveryDeps {
  now: () => number;
  store: WebhooksStore;
  sealer: Sealer;
  fetch: GuardedFetch;
  log: Logger;
  settings: DeliverySettings;
  /** The mails to the admins when the server disables an endpoint: `gone` (410) or `failing` (three days). */
  disabledMails: (endpoint: { tenantId: string; endpointId: string; url: string; reason: "gone" | "failing" }, notice: DisabledNotice) => OutgoingMail[];
  /** Mail was queued (with a disable): the mailer need not wait for its next poll. */
  mailed: () => void;
}

/** The event as GET /api/v1/events shows it, as JSON text; null when the event is gone from the log. */
export function bodyOf(d: LeasedDelivery): string | null {
  if (d.payload !== null) return d.payload;
  if (d.ev_data === null || d.event_seq === null) return null;
  return JSON.stringify({
    id: eventId(Number(d.event_seq)),
    type: d.event_type,
    created_at: toIso(Number(d.ev_created_at)),
    organization_id: d.tenant_id,
    actor: { type: d.ev_actor_type, id: d.ev_actor_id },
    data: JSON.parse(d.ev_data) as unknown,
  });
}

/**
 * The `webhook-signature` header: `v1,<base64 HMAC>` with the current secret, and, in the day
 * after a rotation, a second one with the previous secret (space-separated, as the Standard
 * Webhooks specification says), so a receiver that has either verifies.
 */
export function signatures(d: Pick<LeasedDelivery, "id" | "secret_sealed" | "previous_secret_sealed" | "previous_secret_until" | "endpoint_id">, sealer: Sealer, at: Date, body: string, now: number): string {
  const sign = (sealed: string) => new Webhook(sealer.open(sealed, d.endpoint_id)).sign(d.id, at, body);
  const out = [sign(d.secret_sealed)];
  if (d.previous_secret_sealed !== null && d.previous_secret_until !== null && Number(d.previous_secret_until) > now) out.push(sign(d.previous_secret_sealed));
  return out.join(" ");
}

/** Exponential backoff with jitter: about backoff × 4^(n-1), between 75 % and 125 % of it, capped. */
export function backoff(attempts: number, s: Pick<DeliverySettings, "backoffMs" | "maxBackoffMs">): number {
  const base = Math.min(s.maxBackoffMs, s.backoffMs * 4 ** Math.max(0, attempts - 1));
  return Math.round(base * (0.75 + Math.random() * 0.5));
}

/**
 * The sender: leases due deliveries (one short transaction), POSTs each through the outbound
 * guard with its Standard Webhooks headers, and records the end. A 2xx ends a delivery; 410
 * disables the endpoint; anything else is retried with backoff until three days have passed,
 * then the endpoint is disabled. A process killed mid-send loses nothing: the lease runs out and
 * the delivery is due again (its receiver may see it twice, with the same webhook-id).
 */
export function createDeliverySender(d: DeliveryDeps) {
  const s = d.settings;
  const busy = new Map<string, number>();
  let inFlight = 0;
  let timer: ReturnType<typeof setInterval> | null = null;
  let ticking = false;
  let again = false;
  const running = new Set<Promise<void>>();
  const key = (r: Pick<DeliveryRow, "tenant_id" | "endpoint_id">) => `${r.tenant_id}/${r.endpoint_id}`;

  async function attempt(job: LeasedDelivery): Promise<void> {
    const started = performance.now();
    const now = d.now();
    const body = bodyOf(job);
    let result: AttemptResult;
    let end: AttemptEnd;
    if (body === null || Buffer.byteLength(body) > MAX_BODY_BYTES) {
      // Nothing to send (the event left the log) or too big to: retrying cannot help.
      await d.store.finish(job.tenant_id, job.id, job.attempts, { kind: "failed" }, { status: null, durationMs: 0, error: body === null ? "event_expired" : "too_large" }, now);
      return;
    }
    try {
      const at = new Date(now);
      const response = await d.fetch(
        job.url,
        {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "user-agent": "WorkspaceSuite-Webhooks/1",
            "webhook-id": job.id,
            "webhook-timestamp": String(Math.floor(now / 1000)),
            "webhook-signature": signatures(job, d.sealer, at, body, now),
          },
          body,
        },
        { purpose: "webhook", timeoutMs: s.timeoutMs, maxBytes: MAX_ANSWER_BYTES },
      );
      result = { status: response.status, durationMs: Math.round(performance.now() - started), error: null };
    } catch (e) {
      const reason = e instanceof OutboundError ? e.reason : "unreachable";
      result = { status: null, durationMs: Math.round(performance.now() - started), error: reason };
    }
    const finished = d.now();
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    const givingUp = !ok && !gone && finished - Number(job.window_start) >= s.retryWindowMs;
    end = ok ? { kind: "delivered" } : gone || givingUp ? { kind: "failed" } : { kind: "retry", next: finished + backoff(job.attempts, s) };
    const reason: EndpointDisable["reason"] = gone ? "gone" : "failing";
    const endpoint = { tenantId: job.tenant_id, endpointId: job.endpoint_id, url: job.url, reason };
    const disabling: EndpointDisable | undefined =
      gone || givingUp ? { endpointId: job.endpoint_id, reason, mails: (notice: DisabledNotice) => d.disabledMails(endpoint, notice) } : undefined;
    if ((await d.store.finish(job.tenant_id, job.id, job.attempts, end, result, finished, disabling)) === "disabled") {
      d.log({ level: "warn", msg: "webhook endpoint disabled", tenant_id: job.tenant_id, webhook_id: job.endpoint_id, reason });
      d.mailed();
    }
  }

  function start(job: LeasedDelivery): void {
    const k = key(job);
    const p = attempt(job)
      .catch((e: unknown) => d.log({ level: "error", msg: "webhook delivery failed", tenant_id: job.tenant_id, delivery_id: job.id, message: (e as Error).message }))
      .finally(() => {
        busy.set(k, (busy.get(k) ?? 1) - 1);
        if (busy.get(k)! <= 0) busy.delete(k);
        inFlight--;
        running.delete(p);
        kick();
      });
    running.add(p);
  }

  /** One step: lease what the caps leave room for, start sending it. */
  async function tick(): Promise<void> {
    if (ticking) {
      again = true;
      return;
    }
    ticking = true;
    try {
      do {
        again = false;
        const room = s.total - inFlight;
        if (room <= 0 || timer === null) return;
        const now = d.now();
        // A lease outlasts the attempt (which the guard ends at its timeout) and the write of its
        // end; past it, the sender is taken for dead and another may try.
        const leased = await d.store.lease(now, now + 2 * s.timeoutMs + 5_000, room, (c) => {
          const k = key(c);
          const n = busy.get(k) ?? 0;
          if (n >= s.perEndpoint) return false;
          busy.set(k, n + 1);
          return true;
        });
        inFlight += leased.length;
        for (const job of leased) start(job);
        if (leased.length === room) again = true;
      } while (again);
    } catch (e) {
      d.log({ level: "error", msg: "webhook lease failed", message: (e as Error).message });
    } finally {
      ticking = false;
    }
  }

  function kick(): void {
    if (timer !== null) void tick();
  }

  return {
    start(): void {
      if (timer !== null) return;
      timer = setInterval(() => void tick(), s.pollMs);
      timer.unref?.();
      void tick();
    },
    kick,
    /** Stops leasing; waits for the attempts under way (each ends within its timeout). */
    async stop(): Promise<void> {
      if (timer !== null) clearInterval(timer);
      timer = null;
      await Promise.allSettled([...running]);
    },
    /** Attempts under way in this process (tests). */
    inFlight: () => inFlight,
  };
}

export type DeliverySender = ReturnType<typeof createDeliverySender>;
