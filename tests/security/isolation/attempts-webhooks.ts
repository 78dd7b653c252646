import { expect } from "bun:test";
import { type Attempt, asB, req, notFound } from "./attempt-kit";
import { testSql } from "../../support/sql";

/** B's webhooks only: none of A's ids or words. */
const onlyB = (body: any, w: any) => {
  const ids = (body.items as Array<{ id: string }>).map((x) => x.id);
  expect(ids).toContain(w.b.webhook.id);
  expect(ids).not.toContain(w.a.webhook.id);
  expect(JSON.stringify(body)).not.toContain(w.a.word);
};

/** Webhooks: B reaching for A's endpoints and deliveries by id, through its list and its writes. */
export const WEBHOOK_ATTEMPTS: Attempt[] = [
  { op: "GET /api/v1/webhooks", what: "list webhooks", send: (w) => req("GET", "/webhooks", asB(w)), expect: { status: 200 }, check: onlyB },
  {
    op: "POST /api/v1/webhooks",
    what: "add a webhook naming A's tenant_id and A's webhook id",
    send: (w) => req("POST", "/webhooks", { ...asB(w), body: { url: "https://hooks.wombat.example/two", events: ["deal.created"], tenant_id: w.a.tenantId, id: w.a.webhook.id } }),
    expect: { status: 201 },
    check: async (b, w) => {
      expect(b.id).not.toBe(w.a.webhook.id);
      const row = await testSql(w.t.ctx).get<{ tenant_id: string }>("SELECT tenant_id FROM webhook_endpoints WHERE id = ?", b.id);
      expect(row?.tenant_id).toBe(w.b.tenantId);
    },
    tenantIdInBody: true,
  },
  { op: "GET /api/v1/webhooks/{id}", what: "read A's webhook", send: (w) => req("GET", `/webhooks/${w.a.webhook.id}`, asB(w)), expect: notFound },
  { op: "PATCH /api/v1/webhooks/{id}", what: "point A's webhook elsewhere", send: (w) => req("PATCH", `/webhooks/${w.a.webhook.id}`, { ...asB(w), body: { url: "https://evil.example/" } }), expect: notFound },
  { op: "DELETE /api/v1/webhooks/{id}", what: "delete A's webhook", send: (w) => req("DELETE", `/webhooks/${w.a.webhook.id}`, asB(w)), expect: notFound },
  { op: "POST /api/v1/webhooks/{id}/rotate-secret", what: "rotate A's secret (and read the new one)", send: (w) => req("POST", `/webhooks/${w.a.webhook.id}/rotate-secret`, asB(w)), expect: notFound },
  { op: "POST /api/v1/webhooks/{id}/test", what: "send A's webhook a test", send: (w) => req("POST", `/webhooks/${w.a.webhook.id}/test`, asB(w)), expect: notFound },
  { op: "GET /api/v1/webhooks/{id}/deliveries", what: "read A's delivery log", send: (w) => req("GET", `/webhooks/${w.a.webhook.id}/deliveries`, asB(w)), expect: notFound },
  {
    op: "POST /api/v1/webhooks/{id}/deliveries/{delivery_id}/retry",
    what: "replay A's delivery through A's webhook",
    send: (w) => req("POST", `/webhooks/${w.a.webhook.id}/deliveries/${w.a.webhook.deliveryId}/retry`, asB(w)),
    expect: notFound,
  },
  {
    op: "POST /api/v1/webhooks/{id}/deliveries/{delivery_id}/retry",
    what: "replay A's delivery through B's own webhook",
    send: (w) => req("POST", `/webhooks/${w.b.webhook.id}/deliveries/${w.a.webhook.deliveryId}/retry`, asB(w)),
    expect: notFound,
  },
];
