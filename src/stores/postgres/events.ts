import type { EventsStore, EventRow, NewEvent } from "../../events/repo";
import type { Pg, PgQueries } from "./database";

/** The channel every instance listens on: a notice is `<organization id>:<last seq>`, never an event's data. */
export const EVENTS_CHANNEL = "suite_events";

// One statement: the organization's counter row (locked until commit, so seq follows the order of
// commits: a writer that comes second waits, then reads the first one's committed number), the
// events, their webhook deliveries (one per enabled endpoint that asks for the type: one probe of
// the organization's endpoints, read in the transaction, so every instance sees a change at once), and the notice, which PostgreSQL delivers at commit, to every instance, or never on rollback.
const APPEND = `
  WITH c AS (
    INSERT INTO event_counters (tenant_id, last_seq) VALUES ($1, $2)
    ON CONFLICT (tenant_id) DO UPDATE SET last_seq = event_counters.last_seq + $2 RETURNING last_seq),
  e AS (
    INSERT INTO events (tenant_id, seq, type, created_at, actor_type, actor_id, data)
    SELECT $1, c.last_seq - $2 + u.n, u.type, $3, u.actor_type, u.actor_id, u.data
      FROM c, unnest($4::text[], $5::text[], $6::text[], $7::text[]) WITH ORDINALITY AS u(type, actor_type, actor_id, data, n)
    RETURNING seq, type),
  w AS (
    INSERT INTO webhook_deliveries (tenant_id, id, endpoint_id, event_seq, event_type, status, attempts, next_attempt_at, window_start, created_at, updated_at)
    SELECT $1, 'e' || e.seq || '_' || h.id, h.id, e.seq, e.type, 'pending', 0, $3, $3, $3, $3
      FROM e JOIN webhook_endpoints h ON h.tenant_id = $1 AND h.enabled = 1 AND jsonb_exists_any(h.events::jsonb, ARRAY['*', e.type]))
  SELECT pg_notify('${EVENTS_CHANNEL}', $1 || ':' || c.last_seq) FROM c`;

/**
 * Appends `events` to the organization's log inside the caller's transaction. Call it as the
 * transaction's last statement: the counter row stays locked from here to the commit, and every
 * other write of the organization that logs an event waits for it.
 */
export async function appendEventsInTx(tx: PgQueries, tenantId: string, events: readonly NewEvent[], now: number): Promise<void> {
  if (events.length === 0) return;
  await tx.unsafe(APPEND, [
    tenantId,
    events.length,
    now,
    events.map((e) => e.type),
    events.map((e) => e.actor.type),
    events.map((e) => e.actor.id),
    events.map((e) => JSON.stringify(e.data)),
  ]);
}

/** PostgreSQL twin of src/stores/sqlite/events.ts. */
export function createPostgresEventsStore(pg: Pg) {
  const store = {
    since: (tenantId: string, after: number, limit: number) =>
      pg.all<EventRow>`SELECT * FROM events WHERE tenant_id = ${tenantId} AND seq > ${after}::bigint ORDER BY seq LIMIT ${limit}`,
    page: (tenantId: string, before: number, after: number, limit: number) =>
      pg.all<EventRow>`SELECT * FROM events WHERE tenant_id = ${tenantId} AND seq < ${before}::bigint AND seq > ${after}::bigint ORDER BY seq DESC LIMIT ${limit}`,
    lastSeq: async (tenantId: string) => (await pg.one<{ last_seq: number }>`SELECT last_seq FROM event_counters WHERE tenant_id = ${tenantId}`)?.last_seq ?? 0,
    async sweepStep(before: number, afterTenant: string, tenants: number, maxRows: number): Promise<{ deleted: number; next: string | null }> {
      const window = await pg.all<{ id: string }>`SELECT id FROM tenants WHERE id > ${afterTenant} ORDER BY id LIMIT ${tenants}`;
      if (window.length === 0) return { deleted: 0, next: null };
      const ids = window.map((t) => t.id);
      // One probe of the (tenant_id, created_at) index per organization (COLLATE: see inEveryTenant).
      const doomed = await pg.unsafe<{ tenant_id: string }>(
        `WITH doomed AS (
           SELECT k.tenant_id, k.seq FROM unnest($1::text[]) WITH ORDINALITY AS w(id, n)
             CROSS JOIN LATERAL (SELECT tenant_id, seq FROM events WHERE tenant_id = w.id COLLATE "default" AND created_at < $2::bigint
                                  ORDER BY created_at LIMIT $3) k
            ORDER BY w.n LIMIT $3)
         DELETE FROM events e USING doomed d WHERE e.tenant_id = d.tenant_id AND e.seq = d.seq RETURNING e.tenant_id`,
        [ids, before, maxRows],
      );
      if (doomed.length >= maxRows) {
        const last = Math.max(...doomed.map((d) => ids.indexOf(d.tenant_id)));
        return { deleted: doomed.length, next: last > 0 ? ids[last - 1]! : afterTenant };
      }
      return { deleted: doomed.length, next: window.length < tenants ? null : ids.at(-1)! };
    },
    async watch(committed: (tenantId: string, seq: number) => void, resync: () => void): Promise<() => Promise<void>> {
      let first = true;
      const sub = await pg.sql.listen(
        EVENTS_CHANNEL,
        (payload) => {
          const colon = payload.lastIndexOf(":");
          const seq = Number(payload.slice(colon + 1));
          if (colon > 0 && Number.isSafeInteger(seq)) committed(payload.slice(0, colon), seq);
        },
        // After a reconnect notices may have been lost: every stream reads the table again.
        () => {
          if (!first) resync();
          first = false;
        },
      );
      return () => sub.unlisten();
    },
  };
  return store satisfies EventsStore;
}

export type PostgresEventsStore = ReturnType<typeof createPostgresEventsStore>;
