import type { Pg, PgQueries } from "./database";
import type { AttemptEnd, AttemptResult, DeliveryRow, EndpointChange, EndpointDisable, EndpointRow, FinishOutcome, LeasedDelivery, WebhooksStore } from "../../webhooks/repo";
import type { PgEnqueueInTx } from "./mail";

/**
 * PostgreSQL twin of src/stores/sqlite/webhooks.ts. Deliveries are written by the event append
 * statement itself (events.ts), which reads the organization's endpoints in the transaction: no
 * cache to keep true across instances.
 */
export function createPostgresWebhooksStore(pg: Pg, others: { mail: PgEnqueueInTx }) {
  const store = {
    list: (tenantId: string) => pg.all<EndpointRow>`SELECT * FROM webhook_endpoints WHERE tenant_id = ${tenantId} ORDER BY created_at, id`,
    byId: (tenantId: string, id: string) => pg.one<EndpointRow>`SELECT * FROM webhook_endpoints WHERE tenant_id = ${tenantId} AND id = ${id}`,
    count: async (tenantId: string) => (await pg.one<{ n: number }>`SELECT count(*)::int AS n FROM webhook_endpoints WHERE tenant_id = ${tenantId}`)!.n,
    async insert(r: EndpointRow): Promise<void> {
      await pg.run`
        INSERT INTO webhook_endpoints (tenant_id, id, url, description, events, enabled, secret_sealed, created_at, updated_at)
        VALUES (${r.tenant_id}, ${r.id}, ${r.url}, ${r.description}, ${r.events}, ${r.enabled}, ${r.secret_sealed}, ${r.created_at}, ${r.created_at})`;
    },
    async update(tenantId: string, id: string, c: EndpointChange): Promise<void> {
      await pg.run`
        UPDATE webhook_endpoints SET url = ${c.url}, description = ${c.description}, events = ${c.events}, enabled = ${c.enabled},
               disabled_reason = ${c.disabled_reason}, updated_at = ${c.updated_at}
         WHERE tenant_id = ${tenantId} AND id = ${id}`;
    },
    async rotate(tenantId: string, id: string, sealed: string, previousSealed: string, previousUntil: number, now: number): Promise<void> {
      await pg.run`
        UPDATE webhook_endpoints SET secret_sealed = ${sealed}, previous_secret_sealed = ${previousSealed}, previous_secret_until = ${previousUntil}, updated_at = ${now}
         WHERE tenant_id = ${tenantId} AND id = ${id}`;
    },
    removeDeliveries: (tenantId: string, id: string, max: number) =>
      pg.run`DELETE FROM webhook_deliveries WHERE tenant_id = ${tenantId} AND id IN (
               SELECT id FROM webhook_deliveries WHERE tenant_id = ${tenantId} AND endpoint_id = ${id} LIMIT ${max})`,
    async remove(tenantId: string, id: string): Promise<void> {
      await pg.run`DELETE FROM webhook_endpoints WHERE tenant_id = ${tenantId} AND id = ${id}`;
    },
    deliveries: (tenantId: string, endpointId: string, limit: number, offset: number) =>
      pg.all<DeliveryRow>`SELECT * FROM webhook_deliveries WHERE tenant_id = ${tenantId} AND endpoint_id = ${endpointId}
                           ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
    deliveryCount: async (tenantId: string, endpointId: string) =>
      (await pg.one<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = ${tenantId} AND endpoint_id = ${endpointId}`)!.n,
    delivery: (tenantId: string, endpointId: string, id: string) =>
      pg.one<DeliveryRow>`SELECT * FROM webhook_deliveries WHERE tenant_id = ${tenantId} AND endpoint_id = ${endpointId} AND id = ${id}`,
    async insertTest(r: DeliveryRow): Promise<void> {
      await pg.run`
        INSERT INTO webhook_deliveries (tenant_id, id, endpoint_id, event_seq, event_type, payload, status, attempts, next_attempt_at, window_start, created_at, updated_at)
        VALUES (${r.tenant_id}, ${r.id}, ${r.endpoint_id}, NULL, ${r.event_type}, ${r.payload}, 'pending', 0, ${r.created_at}, ${r.created_at}, ${r.created_at}, ${r.created_at})`;
    },
    async requeue(tenantId: string, id: string, now: number): Promise<void> {
      await pg.run`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ${now}, window_start = ${now}, updated_at = ${now} WHERE tenant_id = ${tenantId} AND id = ${id}`;
    },
    /**
     * Several instances lease at once: FOR UPDATE SKIP LOCKED hands each candidates no other lease
     * holds, and a row another lease moved meanwhile is checked again against `next_attempt_at`
     * after its lock, so a delivery goes to one sender until its lease runs out.
     */
    async lease(now: number, leaseUntil: number, limit: number, accept: (d: DeliveryRow) => boolean): Promise<LeasedDelivery[]> {
      const chosen = await pg.begin(async (tx) => {
        const due = await tx.all<DeliveryRow>`
          SELECT d.* FROM webhook_deliveries d
           WHERE d.status = 'pending' AND d.next_attempt_at <= ${now}::bigint
             AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.tenant_id = d.tenant_id AND w.id = d.endpoint_id AND w.enabled = 1)
           LIMIT ${limit * 4} FOR UPDATE OF d SKIP LOCKED`;
        const out: DeliveryRow[] = [];
        for (const d of due) if (out.length < limit && accept(d)) out.push(d);
        if (out.length === 0) return out;
        await tx.unsafe(
          `UPDATE webhook_deliveries d SET next_attempt_at = $3, attempts = d.attempts + 1
             FROM unnest($1::text[], $2::text[]) AS k(tenant_id, id) WHERE d.tenant_id = k.tenant_id AND d.id = k.id COLLATE "C"`,
          [out.map((d) => d.tenant_id), out.map((d) => d.id), leaseUntil],
        );
        return out;
      });
      if (chosen.length === 0) return [];
      return pg.unsafe<LeasedDelivery>(
        `SELECT d.*, w.url, w.secret_sealed, w.previous_secret_sealed, w.previous_secret_until,
                e.created_at AS ev_created_at, e.actor_type AS ev_actor_type, e.actor_id AS ev_actor_id, e.data AS ev_data
           FROM unnest($1::text[], $2::text[]) AS k(tenant_id, id)
           JOIN webhook_deliveries d ON d.tenant_id = k.tenant_id AND d.id = k.id COLLATE "C"
           JOIN webhook_endpoints w ON w.tenant_id = d.tenant_id AND w.id = d.endpoint_id
           LEFT JOIN events e ON e.tenant_id = d.tenant_id AND e.seq = d.event_seq`,
        [chosen.map((d) => d.tenant_id), chosen.map((d) => d.id)],
      );
    },
    async finish(tenantId: string, id: string, attempts: number, end: AttemptEnd, r: AttemptResult, now: number, disabling?: EndpointDisable): Promise<FinishOutcome> {
      const status = end.kind === "retry" ? "pending" : end.kind;
      const next = end.kind === "retry" ? end.next : now;
      const ended = (q: PgQueries) => q.run`
        UPDATE webhook_deliveries SET status = ${status}, next_attempt_at = ${next}::bigint, last_status = ${r.status}, last_duration_ms = ${r.durationMs},
               last_error = ${r.error}, updated_at = ${now}::bigint
         WHERE tenant_id = ${tenantId} AND id = ${id} AND attempts = ${attempts} AND status = 'pending'`;
      // Most ends disable nothing: one statement, no transaction around it.
      if (!disabling) return (await ended(pg)) > 0 ? "recorded" : "stale";
      return pg.begin(async (tx) => {
        if ((await ended(tx)) === 0) return "stale";
        const n = await tx.run`UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ${disabling.reason}, updated_at = ${now}
                                WHERE tenant_id = ${tenantId} AND id = ${disabling.endpointId} AND enabled = 1`;
        if (n === 0) return "recorded";
        const t = await tx.one<{ name: string; subdomain: string }>`SELECT name, subdomain FROM tenants WHERE id = ${tenantId}`;
        const recipients = (await tx.all<{ email: string }>`SELECT email FROM users WHERE tenant_id = ${tenantId} AND role = 'admin' ORDER BY email`).map((a) => a.email);
        if (t) for (const m of disabling.mails({ tenantName: t.name, subdomain: t.subdomain, recipients })) await others.mail.enqueueInTx(tx, m, now);
        return "disabled";
      });
    },
    backlog: async () =>
      (await pg.one<{ pending: number; failing: number }>`
        SELECT count(*)::int AS pending, count(*) FILTER (WHERE attempts > 0)::int AS failing FROM webhook_deliveries WHERE status = 'pending'`)!,
    async sweepStep(before: number, max: number): Promise<number> {
      let deleted = 0;
      for (const e of await pg.all<{ tenant_id: string; id: string }>`SELECT tenant_id, id FROM webhook_endpoints`) {
        deleted += await pg.run`
          DELETE FROM webhook_deliveries WHERE tenant_id = ${e.tenant_id} AND id IN (SELECT id FROM webhook_deliveries
            WHERE tenant_id = ${e.tenant_id} AND endpoint_id = ${e.id} AND created_at < ${before}::bigint AND status <> 'pending' ORDER BY created_at LIMIT ${max - deleted})`;
        if (deleted >= max) break;
      }
      return deleted;
    },
  };
  return store satisfies WebhooksStore;
}
