import { expect } from "bun:test";
import { type Attempt, asB, emptyPage, landedInB, notFound, ownPage, req } from "./attempt-kit";
import type { World } from "./world";
import { testSql } from "../../support/sql";

const stageRow = async (w: World, id: string) => (await testSql(w.t.ctx).get("SELECT tenant_id, name, position FROM pipeline_stages WHERE id = ?1", id)) as { tenant_id: string; name: string; position: number };
const stageIds = async (w: World, tenantId: string) =>
  (await testSql(w.t.ctx).all<{ id: string }>("SELECT id FROM pipeline_stages WHERE tenant_id = ?1 ORDER BY position, key", tenantId)).map((r) => r.id);

/**
 * The audit log and the changing of pipeline stages. Before the CRM's attempts: B does not yet
 * have a stage with A's key, so naming it as a target is naming A's stage.
 */
export const AUDIT_STAGE_ATTEMPTS: Attempt[] = [
  // ---- audit log ----
  { op: "GET /api/v1/audit-log", what: "read the audit log", send: (w) => req("GET", "/audit-log?size=100", asB(w)), expect: { status: 200 }, check: ownPage("audit_log") },
  { op: "GET /api/v1/audit-log", what: "audit log, no tenant named", send: (w) => req("GET", "/audit-log?size=100", { token: w.b.admin.access }), expect: { status: 200 }, check: ownPage("audit_log") },
  ...(["admin", "member"] as const).map(
    (who): Attempt => ({ op: "GET /api/v1/audit-log", what: `user_id = A's ${who}`, send: (w) => req("GET", `/audit-log?user_id=${w.a[who].id}`, asB(w)), expect: { status: 200 }, check: emptyPage }),
  ),
  {
    op: "GET /api/v1/audit-log",
    what: "filtered by actions A also has",
    send: (w) => req("GET", "/audit-log?size=100&action=tenant.signup&action=invitation.accepted", asB(w)),
    expect: { status: 200 },
    check: ownPage("audit_log", "action IN ('tenant.signup', 'invitation.accepted')"),
  },
  { op: "GET /api/v1/audit-log", what: "B's member reads the audit log", send: (w) => req("GET", "/audit-log", { token: w.b.member.access, tenant: "bravo" }), expect: { status: 403, code: "forbidden" } },

  // ---- pipeline stages ----
  {
    op: "PATCH /api/v1/crm/pipeline-stages/{id}",
    what: "rename A's stage",
    send: (w) => req("PATCH", `/crm/pipeline-stages/${w.a.stage.id}`, { ...asB(w), body: { name: "Hijacked" } }),
    expect: notFound,
    check: async (_b, w) => expect((await stageRow(w, w.a.stage.id)).name).not.toBe("Hijacked"),
  },
  {
    op: "PATCH /api/v1/crm/pipeline-stages/{id}",
    what: "B's member renames A's stage",
    send: (w) => req("PATCH", `/crm/pipeline-stages/${w.a.stage.id}`, { token: w.b.member.access, tenant: "bravo", body: { name: "Hijacked" } }),
    expect: { status: 403, code: "forbidden" },
  },
  {
    op: "PATCH /api/v1/crm/pipeline-stages/{id}",
    what: "change B's stage naming A's tenant_id",
    send: (w) => req("PATCH", `/crm/pipeline-stages/${w.b.stage.id}`, { ...asB(w), body: { probability: 45, tenant_id: w.a.tenantId } }),
    expect: { status: 200 },
    check: async (b, w) => {
      landedInB(b, w);
      expect(await stageRow(w, w.b.stage.id)).toMatchObject({ tenant_id: w.b.tenantId });
    },
    tenantIdInBody: true,
  },
  {
    op: "POST /api/v1/crm/pipeline-stages/reorder",
    what: "reorder with A's stage ids",
    send: async (w) => req("POST", "/crm/pipeline-stages/reorder", { ...asB(w), body: { ids: (await stageIds(w, w.a.tenantId)).reverse() } }),
    expect: { status: 422, type: "value_error" },
    check: async (_b, w) => expect((await stageRow(w, w.a.stage.id)).position).toBe((await stageIds(w, w.a.tenantId)).indexOf(w.a.stage.id)),
  },
  {
    op: "POST /api/v1/crm/pipeline-stages/reorder",
    what: "reorder B's stages with one of A's in place of B's own",
    send: async (w) => req("POST", "/crm/pipeline-stages/reorder", { ...asB(w), body: { ids: [w.a.stage.id, ...(await stageIds(w, w.b.tenantId)).filter((id) => id !== w.b.stage.id)] } }),
    expect: { status: 422, type: "value_error" },
  },
  {
    op: "POST /api/v1/crm/pipeline-stages/reorder",
    what: "reorder B's own stages, naming A's tenant_id",
    send: async (w) => req("POST", "/crm/pipeline-stages/reorder", { ...asB(w), body: { ids: (await stageIds(w, w.b.tenantId)), tenant_id: w.a.tenantId } }),
    expect: { status: 200 },
    check: ownPage("pipeline_stages"),
    tenantIdInBody: true,
  },
  {
    op: "DELETE /api/v1/crm/pipeline-stages/{id}",
    what: "delete A's stage",
    send: (w) => req("DELETE", `/crm/pipeline-stages/${w.a.stage.id}?move_to=new`, asB(w)),
    expect: notFound,
    check: async (_b, w) => expect(await stageRow(w, w.a.stage.id)).toBeTruthy(),
  },
  {
    op: "DELETE /api/v1/crm/pipeline-stages/{id}",
    what: "delete B's stage, moving its deals to A's stage key",
    send: (w) => req("DELETE", `/crm/pipeline-stages/${w.b.stage.id}?move_to=${w.a.stage.key}`, asB(w)),
    expect: { status: 422, type: "literal_error" },
    check: async (_b, w) => {
      expect(await stageRow(w, w.b.stage.id)).toBeTruthy();
      expect(await testSql(w.t.ctx).get("SELECT count(*) AS n FROM deals WHERE tenant_id = ?1 AND stage = ?2", w.a.tenantId, w.a.stage.key)).toEqual({ n: 1 });
    },
  },
];
