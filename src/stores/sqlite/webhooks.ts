import type { NewEvent } from "../../events/repo";
import { type Db, writeTxAsync } from "../../db/database";
import {
  type AttemptEnd, type AttemptResult, type DeliveryRow, type EndpointChange, type EndpointRow, type LeasedDelivery, type Subscription,
  type EndpointDisable, type FinishOutcome, type WebhooksStore, eventDeliveryId, subscriptionOf,
} from "../../webhooks/repo";
import type { SqliteMailStore } from "./mail";

const LEASED = `SELECT d.*, w.url, w.secret_sealed, w.previous_secret_sealed, w.previous_secret_until,
    e.created_at AS ev_created_at, e.actor_type AS ev_actor_type, e.actor_id AS ev_actor_id, e.data AS ev_data
  FROM webhook_deliveries d JOIN webhook_endpoints w ON w.tenant_id = d.tenant_id AND w.id = d.endpoint_id
  LEFT JOIN events e ON e.tenant_id = d.tenant_id AND e.seq = d.event_seq
  WHERE d.tenant_id = ?1 AND d.id = ?2`;

/**
 * SQL of webhooks (src/webhooks/repo.ts). `deliveriesInTx` runs inside every event append (the
 * writing store's transaction): each organization's subscribed endpoints are kept in memory, read
 * once and dropped by every endpoint write of this connection, so an organization without webhooks
 * pays one map lookup per deal write. SQLite has one server process; the command line writes no
 * endpoints.
 */
export function createSqliteWebhooksStore(db: Db, others: { mail: SqliteMailStore }) {
  const subscribed = db.prepare<Pick<EndpointRow, "id" | "events">, [string]>("SELECT id, events FROM webhook_endpoints WHERE tenant_id = ?1 AND enabled = 1");
  const insertDelivery = db.prepare<never, [string, string, string, number | null, string, string | null, number]>(
    `INSERT INTO webhook_deliveries (tenant_id, id, endpoint_id, event_seq, event_type, payload, status, attempts, next_attempt_at, window_start, created_at, updated_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', 0, ?7, ?7, ?7, ?7) ON CONFLICT DO NOTHING`,
  );
  const list = db.prepare<EndpointRow, [string]>("SELECT * FROM webhook_endpoints WHERE tenant_id = ?1 ORDER BY created_at, id");
  const byId = db.prepare<EndpointRow, [string, string]>("SELECT * FROM webhook_endpoints WHERE tenant_id = ?1 AND id = ?2");
  const count = db.prepare<{ n: number }, [string]>("SELECT count(*) AS n FROM webhook_endpoints WHERE tenant_id = ?1");
  const insert = db.prepare<never, [string, string, string, string | null, string, number, string, number]>(
    `INSERT INTO webhook_endpoints (tenant_id, id, url, description, events, enabled, secret_sealed, created_at, updated_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)`,
  );
  const update = db.prepare<never, [string, string, string, string | null, string, number, string | null, number]>(
    "UPDATE webhook_endpoints SET url = ?3, description = ?4, events = ?5, enabled = ?6, disabled_reason = ?7, updated_at = ?8 WHERE tenant_id = ?1 AND id = ?2",
  );
  const rotate = db.prepare<never, [string, string, string, string, number, number]>(
    "UPDATE webhook_endpoints SET secret_sealed = ?3, previous_secret_sealed = ?4, previous_secret_until = ?5, updated_at = ?6 WHERE tenant_id = ?1 AND id = ?2",
  );
  const disable = db.prepare<never, [string, string, string, number]>(
    "UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ?3, updated_at = ?4 WHERE tenant_id = ?1 AND id = ?2 AND enabled = 1",
  );
  const removeSome = db.prepare<never, [string, string, number]>(
    "DELETE FROM webhook_deliveries WHERE tenant_id = ?1 AND id IN (SELECT id FROM webhook_deliveries WHERE tenant_id = ?1 AND endpoint_id = ?2 LIMIT ?3)",
  );
  const remove = db.prepare<never, [string, string]>("DELETE FROM webhook_endpoints WHERE tenant_id = ?1 AND id = ?2");
  const page = db.prepare<DeliveryRow, [string, string, number, number]>(
    "SELECT * FROM webhook_deliveries WHERE tenant_id = ?1 AND endpoint_id = ?2 ORDER BY created_at DESC, id DESC LIMIT ?3 OFFSET ?4",
  );
  const pageCount = db.prepare<{ n: number }, [string, string]>("SELECT count(*) AS n FROM webhook_deliveries WHERE tenant_id = ?1 AND endpoint_id = ?2");
  const one = db.prepare<DeliveryRow, [string, string, string]>("SELECT * FROM webhook_deliveries WHERE tenant_id = ?1 AND endpoint_id = ?2 AND id = ?3");
  const requeue = db.prepare<never, [string, string, number]>(
    "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?3, window_start = ?3, updated_at = ?3 WHERE tenant_id = ?1 AND id = ?2",
  );
  // Due deliveries of enabled endpoints, through the partial index of pending ones.
  const due = db.prepare<DeliveryRow, [number, number]>(
    `SELECT d.* FROM webhook_deliveries d JOIN webhook_endpoints w ON w.tenant_id = d.tenant_id AND w.id = d.endpoint_id AND w.enabled = 1
      WHERE d.status = 'pending' AND d.next_attempt_at <= ?1 LIMIT ?2`,
  );
  const take = db.prepare<never, [string, string, number]>(
    "UPDATE webhook_deliveries SET next_attempt_at = ?3, attempts = attempts + 1 WHERE tenant_id = ?1 AND id = ?2",
  );
  const leased = db.prepare<LeasedDelivery, [string, string]>(LEASED);
  const finish = db.prepare<never, [string, string, number, string, number, number | null, number, string | null, number]>(
    `UPDATE webhook_deliveries SET status = ?4, next_attempt_at = ?5, last_status = ?6, last_duration_ms = ?7, last_error = ?8, updated_at = ?9
      WHERE tenant_id = ?1 AND id = ?2 AND attempts = ?3 AND status = 'pending'`,
  );
  const admins = db.prepare<{ email: string }, [string]>("SELECT email FROM users WHERE tenant_id = ?1 AND role = 'admin' ORDER BY email");
  const tenant = db.prepare<{ name: string; subdomain: string }, [string]>("SELECT name, subdomain FROM tenants WHERE id = ?1");
  const backlog = db.prepare<{ pending: number; failing: number }, []>(
    "SELECT count(*) AS pending, coalesce(sum(attempts > 0), 0) AS failing FROM webhook_deliveries WHERE status = 'pending'",
  );
  const endpoints = db.prepare<{ tenant_id: string; id: string }, []>("SELECT tenant_id, id FROM webhook_endpoints");
  const sweep = db.prepare<never, [string, string, number, number]>(
    `DELETE FROM webhook_deliveries WHERE tenant_id = ?1 AND id IN (SELECT id FROM webhook_deliveries
      WHERE tenant_id = ?1 AND endpoint_id = ?2 AND created_at < ?3 AND status <> 'pending' ORDER BY created_at LIMIT ?4)`,
  );

  /** Each organization's enabled endpoints (none is kept too, as one shared empty list: most organizations have none). */
  const cache = new Map<string, readonly Subscription[]>();
  const NONE: readonly Subscription[] = Object.freeze([]);
  const subscriptions = (tenantId: string): readonly Subscription[] => {
    let subs = cache.get(tenantId);
    if (!subs) {
      const read = subscribed.all(tenantId).map(subscriptionOf);
      subs = read.length === 0 ? NONE : read;
      cache.set(tenantId, subs);
    }
    return subs;
  };
  const changed = (tenantId: string) => cache.delete(tenantId);

  /** The deliveries of events just appended (seq `firstSeq` on), inside the append's transaction. */
  function deliveriesInTx(tenantId: string, firstSeq: number, events: readonly NewEvent[], now: number): void {
    const subs = subscriptions(tenantId);
    if (subs.length === 0) return;
    for (let i = 0; i < events.length; i++) {
      const type = events[i]!.type;
      for (const s of subs) if (s.all || s.types.has(type)) insertDelivery.run(tenantId, eventDeliveryId(firstSeq + i, s.id), s.id, firstSeq + i, type, null, now);
    }
  }

  const store = {
    deliveriesInTx,
    list: async (tenantId: string) => list.all(tenantId),
    byId: async (tenantId: string, id: string) => byId.get(tenantId, id),
    count: async (tenantId: string) => count.get(tenantId)!.n,
    async insert(r: EndpointRow): Promise<void> {
      insert.run(r.tenant_id, r.id, r.url, r.description, r.events, r.enabled, r.secret_sealed, r.created_at);
      changed(r.tenant_id);
    },
    async update(tenantId: string, id: string, c: EndpointChange): Promise<void> {
      update.run(tenantId, id, c.url, c.description, c.events, c.enabled, c.disabled_reason, c.updated_at);
      changed(tenantId);
    },
    async rotate(tenantId: string, id: string, sealed: string, previousSealed: string, previousUntil: number, now: number): Promise<void> {
      rotate.run(tenantId, id, sealed, previousSealed, previousUntil, now);
    },
    async removeDeliveries(tenantId: string, id: string, max: number): Promise<number> {
      return writeTxAsync(db, () => removeSome.run(tenantId, id, max).changes);
    },
    async remove(tenantId: string, id: string): Promise<void> {
      await writeTxAsync(db, () => remove.run(tenantId, id));
      changed(tenantId);
    },
    deliveries: async (tenantId: string, endpointId: string, limit: number, offset: number) => page.all(tenantId, endpointId, limit, offset),
    deliveryCount: async (tenantId: string, endpointId: string) => pageCount.get(tenantId, endpointId)!.n,
    delivery: async (tenantId: string, endpointId: string, id: string) => one.get(tenantId, endpointId, id),
    async insertTest(r: DeliveryRow): Promise<void> {
      insertDelivery.run(r.tenant_id, r.id, r.endpoint_id, null, r.event_type, r.payload, r.created_at);
    },
    async requeue(tenantId: string, id: string, now: number): Promise<void> {
      requeue.run(tenantId, id, now);
    },
    async lease(now: number, leaseUntil: number, limit: number, accept: (d: DeliveryRow) => boolean): Promise<LeasedDelivery[]> {
      const chosen = await writeTxAsync(db, () => {
        const out: DeliveryRow[] = [];
        for (const d of due.all(now, limit * 4)) {
          if (out.length >= limit || !accept(d)) continue;
          take.run(d.tenant_id, d.id, leaseUntil);
          out.push(d);
        }
        return out;
      });
      return chosen.map((d) => leased.get(d.tenant_id, d.id)!);
    },
    async finish(tenantId: string, id: string, attempts: number, end: AttemptEnd, r: AttemptResult, now: number, disabling?: EndpointDisable): Promise<FinishOutcome> {
      const status = end.kind === "retry" ? "pending" : end.kind;
      const ended = () => finish.run(tenantId, id, attempts, status, end.kind === "retry" ? end.next : now, r.status, r.durationMs, r.error, now).changes > 0;
      // Most ends disable nothing: one statement, its own transaction.
      if (!disabling) return ended() ? "recorded" : "stale";
      const outcome = await writeTxAsync(db, (): FinishOutcome => {
        if (!ended()) return "stale";
        if (disable.run(tenantId, disabling.endpointId, disabling.reason, now).changes === 0) return "recorded";
        const t = tenant.get(tenantId);
        const recipients = admins.all(tenantId).map((a) => a.email);
        // Looked up on each call, not kept: tests wrap enqueueInTx to see every mail.
        if (t) for (const m of disabling.mails({ tenantName: t.name, subdomain: t.subdomain, recipients })) others.mail.enqueueInTx(m, now);
        return "disabled";
      });
      if (outcome === "disabled") changed(tenantId);
      return outcome;
    },
    backlog: async () => backlog.get()!,
    async sweepStep(before: number, max: number): Promise<number> {
      let deleted = 0;
      for (const e of endpoints.all()) {
        deleted += await writeTxAsync(db, () => sweep.run(e.tenant_id, e.id, before, max - deleted).changes);
        if (deleted >= max) break;
      }
      return deleted;
    },
  };
  return store satisfies WebhooksStore;
}

export type SqliteWebhooksStore = ReturnType<typeof createSqliteWebhooksStore>;
