import { expect } from "bun:test";
import { type Attempt, asB, req, notFound, ownPage } from "./attempt-kit";
import { testSql } from "../../support/sql";

/** Saved views of the deal list: B reaching for A's views by id, through its list and its writes. */
export const VIEW_ATTEMPTS: Attempt[] = [
  { op: "GET /api/v1/crm/views", what: "list views", send: (w) => req("GET", "/crm/views", asB(w)), expect: { status: 200 }, check: ownPage("saved_views", (w) => `shared = 1 OR owner_id = '${w.b.admin.id}'`) },
  { op: "GET /api/v1/crm/views", what: "B's member lists views", send: (w) => req("GET", "/crm/views", { token: w.b.member.access, tenant: "bravo" }), expect: { status: 200 }, check: ownPage("saved_views", (w) => `shared = 1 OR owner_id = '${w.b.member.id}'`) },
  {
    op: "POST /api/v1/crm/views",
    what: "save a view naming A's tenant_id, A's view id and A's users",
    send: (w) => req("POST", "/crm/views", { ...asB(w), body: { name: "Wombat view", kind: "table", query: { assigned_to: w.a.member.id }, shared: true, tenant_id: w.a.tenantId, id: w.a.viewId, owner_id: w.a.admin.id } }),
    expect: { status: 201 },
    check: async (b, w) => {
      expect(b.id).not.toBe(w.a.viewId);
      expect(b.owner.id).toBe(w.b.admin.id);
      const row = await testSql(w.t.ctx).get<{ tenant_id: string }>("SELECT tenant_id FROM saved_views WHERE id = ?", b.id);
      expect(row?.tenant_id).toBe(w.b.tenantId);
    },
    tenantIdInBody: true,
  },
  { op: "PATCH /api/v1/crm/views/{id}", what: "change A's shared view", send: (w) => req("PATCH", `/crm/views/${w.a.viewId}`, { ...asB(w), body: { name: "Hijacked" } }), expect: notFound },
  { op: "PATCH /api/v1/crm/views/{id}", what: "B's member makes A's view their default", send: (w) => req("PATCH", `/crm/views/${w.a.viewId}`, { token: w.b.member.access, body: { is_default: true } }), expect: notFound },
  { op: "DELETE /api/v1/crm/views/{id}", what: "delete A's shared view", send: (w) => req("DELETE", `/crm/views/${w.a.viewId}`, asB(w)), expect: notFound },
];
