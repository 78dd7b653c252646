import type { Principal } from "../kernel/principal";
import { errors } from "../kernel/errors";
import type { EventsBus } from "./bus";
import { type EventList, type EventRead, toEventRead } from "./model";
import { type EventRow, type EventsStore, eventId } from "./repo";

export interface EventsDeps {
  now: () => number;
  store: EventsStore;
  bus: EventsBus;
  /** Whether the organization has the module (the CRM's events need `crm`, the team's `users`). */
  hasModule: (tenantId: string, module: "crm" | "users") => Promise<boolean>;
  /** The caller's principal for a token now, or a throw when its session has ended (auth/service.ts). */
  authenticate: (token: string) => Promise<Principal & { expiresAt?: number }>;
  retentionMs: number;
  heartbeatMs: number;
}

const CRM_TYPES = /^(deal|account|contact|pipeline_stage|import)\./;
const TEAM_TYPES = /^(member|invitation)\./;

/**
 * Which events a caller may read: the CRM's to anyone of an organization with the CRM (every
 * member reads every deal, account, contact and stage there); the team's (members, invitations)
 * and sign-in events to admins only, as the member list and the security log are theirs.
 */
export async function visibility(p: Principal, hasModule: EventsDeps["hasModule"]): Promise<(type: string) => boolean> {
  const [crm, users] = await Promise.all([hasModule(p.tenantId, "crm"), p.role === "admin" ? hasModule(p.tenantId, "users") : false]);
  const admin = p.role === "admin";
  return (type) => (CRM_TYPES.test(type) ? crm : TEAM_TYPES.test(type) ? admin && users : admin);
}

const SWEEP_TENANTS_PER_STEP = 50;
const SWEEP_ROWS_PER_STEP = 2000;
const LIST_MAX_READS = 10;
/** A stream whose client reads slower than this many events behind is closed: it resumes with Last-Event-ID. */
const MAX_QUEUED = 1000;

/**
 * An event row's text on the stream, made once for every stream it reaches: the bus hands the
 * same row objects to all of an organization's streams (1,000 streams: one JSON.stringify, not
 * 1,000). Weakly held: gone with the row.
 */
const streamTexts = new WeakMap<EventRow, string>();
const streamText = (r: EventRow): string => {
  let text = streamTexts.get(r);
  if (text === undefined) streamTexts.set(r, (text = `id: ${eventId(r.seq)}\nevent: ${r.type}\ndata: ${JSON.stringify(toEventRead(r))}\n\n`));
  return text;
};

/** The event log: the list, the live stream, and the retention sweep. */
export function createEventsService(d: EventsDeps) {
  /**
   * The organization's modules, read once a turn of the event loop for all its streams: a batch
   * of events reaches every stream in the same turn, and each of them asked the same question
   * (two reads a stream). An answer is never older than the turn that read it.
   */
  const modules = new Map<string, Promise<boolean>>();
  const hasModuleThisTurn: EventsDeps["hasModule"] = (tenantId, module) => {
    const key = `${tenantId}\u0000${module}`;
    let answer = modules.get(key);
    if (!answer) {
      if (modules.size === 0) setImmediate(() => modules.clear());
      modules.set(key, (answer = d.hasModule(tenantId, module)));
    }
    return answer;
  };
  // Started with the first stream: an instance nobody streams from holds no listening connection.
  let watching: Promise<() => Promise<void>> | null = null;
  const watch = () => (watching ??= d.store.watch(d.bus.committed, d.bus.resync).catch((e) => {
    watching = null;
    throw e;
  }));

  /** Newest first, after the `after` cursor (older than it) and after `since` (newer than it). */
  async function list(auth: Principal, q: { after: number | null; since: number | null; limit: number }): Promise<EventList> {
    const visible = await visibility(auth, d.hasModule);
    const items: EventRead[] = [];
    let before = q.after ?? Number.MAX_SAFE_INTEGER;
    let exhausted = false;
    // Events the caller may not see are skipped; a bounded number of reads, each a key range.
    for (let i = 0; i < LIST_MAX_READS && items.length < q.limit && !exhausted; i++) {
      const rows = await d.store.page(auth.tenantId, before, q.since ?? 0, q.limit);
      let used = 0;
      for (const r of rows) {
        used++;
        before = r.seq;
        if (visible(r.type)) items.push(toEventRead(r));
        if (items.length === q.limit) break;
      }
      exhausted = rows.length < q.limit && used === rows.length;
    }
    return { items, next_after: exhausted || before === Number.MAX_SAFE_INTEGER ? null : eventId(before) };
  }

  /** Every event older than the retention, in steps of one short transaction each. */
  async function sweep(now = d.now()): Promise<number> {
    let deleted = 0;
    let after: string | null = "";
    while (after !== null) {
      const step: { deleted: number; next: string | null } = await d.store.sweepStep(now - d.retentionMs, after, SWEEP_TENANTS_PER_STEP, SWEEP_ROWS_PER_STEP);
      deleted += step.deleted;
      after = step.next;
      if (after !== null) await new Promise((r) => setImmediate(r));
    }
    return deleted;
  }

  /**
   * The live stream of `auth`'s organization as Server-Sent Events, from after `lastSeq` (the
   * organization's current end when null). Before each batch of events and each heartbeat the
   * session is checked again (`token`): a revoked or expired one ends the stream, and the events
   * shown follow the caller's role and the organization's modules as they are now.
   */
  async function stream(auth: Principal, token: string, lastSeq: number | null): Promise<ReadableStream<Uint8Array>> {
    const encoder = new TextEncoder();
    // A Last-Event-ID past the log's end (another organization's number, a stale client) counts as
    // its end: a channel must never start past events still to come.
    const end = await d.store.lastSeq(auth.tenantId);
    const start = lastSeq === null ? end : Math.min(lastSeq, end);
    let queue: EventRow[] = [];
    let draining = false;
    let closed = false;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let leave: () => void = () => {};
    let heartbeat: ReturnType<typeof setInterval> | undefined;

    const close = () => {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      leave();
      queue = [];
      try {
        controller.close();
      } catch {
        // Already closed by the client.
      }
    };
    /** The session still holds: the principal as it is now, or null (the stream is closed). */
    const recheck = async (): Promise<Principal | null> => {
      try {
        return await d.authenticate(token);
      } catch {
        close();
        return null;
      }
    };
    const drain = async () => {
      if (draining || closed) return;
      draining = true;
      try {
        while (queue.length > 0 && !closed) {
          const p = await recheck();
          if (!p || p.tenantId !== auth.tenantId) return close();
          const visible = await visibility(p, hasModuleThisTurn);
          const rows = queue;
          queue = [];
          let text = "";
          for (const r of rows) if (visible(r.type)) text += streamText(r);
          if (text && !closed) controller.enqueue(encoder.encode(text));
        }
      } finally {
        draining = false;
      }
    };
    const sub = {
      last: start,
      catchingUp: false,
      take(rows: EventRow[]) {
        if (closed) return;
        for (const r of rows)
          if (r.seq > sub.last) {
            queue.push(r);
            sub.last = r.seq;
          }
        if (queue.length > MAX_QUEUED) return close();
        void drain();
      },
    };

    return new ReadableStream<Uint8Array>({
      start: async (c) => {
        controller = c;
        // A comment first: the client (and any proxy) sees the answer begin at once.
        c.enqueue(encoder.encode(`: connected\nretry: 3000\n\n`));
        await watch();
        leave = await d.bus.join(auth.tenantId, sub);
        // Cancelled while joining: nothing to keep.
        if (closed) return leave();
        heartbeat = setInterval(async () => {
          if ((await recheck()) && !closed) {
            try {
              controller.enqueue(encoder.encode(": heartbeat\n\n"));
            } catch {
              close();
            }
          }
        }, d.heartbeatMs);
      },
      cancel: close,
    });
  }

  return {
    list,
    sweep,
    stream,
    heartbeatMs: d.heartbeatMs,
    /** Stops listening for notices (the context's close). */
    close: (): Promise<void> | null => {
      const w = watching;
      watching = null;
      return w ? w.then((stop) => stop(), () => {}) : null;
    },
  };
}

export type EventsService = ReturnType<typeof createEventsService>;
