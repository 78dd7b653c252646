import type { EventsStore, EventRow, NewEvent } from "../../events/repo";
import { type Db, writeTxAsync } from "../../db/database";

/**
 * SQL of the event log. `appendInTx` runs inside the writing store's transaction: it takes the
 * organization's next numbers from its counter row (so the order of seq is the order of commits:
 * SQLite has one writer) and inserts the events. Listeners hear of them on the next microtask,
 * after the synchronous transaction has ended; a notice of an event rolled back finds nothing new
 * when the listener reads the table, which is the only thing it trusts.
 */
export function createSqliteEventsStore(db: Db) {
  const bump = db.prepare<{ last_seq: number }, [string, number]>(
    `INSERT INTO event_counters (tenant_id, last_seq) VALUES (?1, ?2)
     ON CONFLICT (tenant_id) DO UPDATE SET last_seq = last_seq + ?2 RETURNING last_seq`,
  );
  const insert = db.prepare<never, [string, number, string, number, string, string | null, string]>(
    "INSERT INTO events (tenant_id, seq, type, created_at, actor_type, actor_id, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
  );
  const since = db.prepare<EventRow, [string, number, number]>("SELECT * FROM events WHERE tenant_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3");
  const page = db.prepare<EventRow, [string, number, number, number]>(
    "SELECT * FROM events WHERE tenant_id = ?1 AND seq < ?2 AND seq > ?3 ORDER BY seq DESC LIMIT ?4",
  );
  const last = db.prepare<{ last_seq: number }, [string]>("SELECT last_seq FROM event_counters WHERE tenant_id = ?1");
  const tenantsAfter = db.prepare<{ id: string }, [string, number]>("SELECT id FROM tenants WHERE id > ?1 ORDER BY id LIMIT ?2");
  const purge = db.prepare<never, [string, number, number]>(
    "DELETE FROM events WHERE tenant_id = ?1 AND seq IN (SELECT seq FROM events WHERE tenant_id = ?1 AND created_at < ?2 ORDER BY created_at LIMIT ?3)",
  );

  const listeners = new Set<(tenantId: string, seq: number) => void>();
  let pending: Array<[string, number]> = [];
  const flush = () => {
    const done = pending;
    pending = [];
    for (const [t, s] of done) for (const l of listeners) l(t, s);
  };

  /** What else an append writes in its transaction: the webhooks' deliveries (set by index.ts). */
  let afterAppendInTx: ((tenantId: string, firstSeq: number, events: readonly NewEvent[], now: number) => void) | null = null;

  /** Appends `events` to the organization's log, inside the caller's writeTx. */
  function appendInTx(tenantId: string, events: readonly NewEvent[], now: number): void {
    if (events.length === 0) return;
    const lastSeq = bump.get(tenantId, events.length)!.last_seq;
    let seq = lastSeq - events.length;
    for (const e of events) insert.run(tenantId, ++seq, e.type, now, e.actor.type, e.actor.id, JSON.stringify(e.data));
    afterAppendInTx?.(tenantId, lastSeq - events.length + 1, events, now);
    if (listeners.size === 0) return;
    if (pending.length === 0) queueMicrotask(flush);
    pending.push([tenantId, lastSeq]);
  }

  const store = {
    appendInTx,
    setAfterAppendInTx: (f: typeof afterAppendInTx) => void (afterAppendInTx = f),
    since: async (tenantId: string, after: number, limit: number) => since.all(tenantId, after, limit),
    page: async (tenantId: string, before: number, after: number, limit: number) => page.all(tenantId, before, after, limit),
    lastSeq: async (tenantId: string) => last.get(tenantId)?.last_seq ?? 0,
    async sweepStep(before: number, afterTenant: string, tenants: number, maxRows: number): Promise<{ deleted: number; next: string | null }> {
      return writeTxAsync(db, () => {
        const window = tenantsAfter.all(afterTenant, tenants);
        let deleted = 0;
        for (let i = 0; i < window.length; i++) {
          deleted += purge.run(window[i]!.id, before, maxRows - deleted).changes;
          // Budget spent: the next step starts again at this organization (it may hold more).
          if (deleted >= maxRows) return { deleted, next: i === 0 ? afterTenant : window[i - 1]!.id };
        }
        return { deleted, next: window.length < tenants ? null : window.at(-1)!.id };
      });
    },
    async watch(committed: (tenantId: string, seq: number) => void, _resync: () => void): Promise<() => Promise<void>> {
      listeners.add(committed);
      return async () => void listeners.delete(committed);
    },
  };
  return store satisfies EventsStore;
}

export type SqliteEventsStore = ReturnType<typeof createSqliteEventsStore>;
