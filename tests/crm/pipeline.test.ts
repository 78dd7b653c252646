import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addMember, login } from "../auth/support";
import { testApp } from "../helpers";
import { type CrmOrg, crmOrg, items422 } from "./support";
import { testSql } from "../support/sql";

const t = testApp();
let org: CrmOrg;
let other: CrmOrg;

beforeAll(async () => {
  org = await crmOrg(t, "stageorg");
  other = await crmOrg(t, "stageother");
});
afterAll(() => t.close());

const stageOf = async (o: CrmOrg, key: string) => ((await o.ok("GET", "/pipeline-stages")) as Array<Record<string, any>>).find((s) => s.key === key)!;
const audits = async (action: string) =>
  (await testSql(t.ctx).all("SELECT user_id, detail FROM audit_log WHERE tenant_id = ?1 AND action = ?2 ORDER BY id", org.tenant.id, action)) as Array<{ user_id: string; detail: string }>;
const counts = async (tenantId: string) =>
  Object.fromEntries(
    (await testSql(t.ctx).all<{ k: string; n: number }>("SELECT assignee || '/' || stage AS k, n FROM deal_counts WHERE tenant_id = ?1 AND n > 0", tenantId)).map((r) => [r.k, r.n]),
  );
const trueCounts = async (tenantId: string) => {
  const out: Record<string, number> = {};
  for (const r of (await testSql(t.ctx).all("SELECT coalesce(assigned_to, '') AS a, stage, count(*) AS n FROM deals WHERE tenant_id = ?1 GROUP BY 1, 2", tenantId)) as Array<{ a: string; stage: string; n: number }>) {
    out[`${r.a}/${r.stage}`] = r.n;
    out[`*/${r.stage}`] = (out[`*/${r.stage}`] ?? 0) + r.n;
  }
  return out;
};

describe("changing a stage", () => {
  test("a rename, colour and probability show at once in every deal of the stage, with an audit row", async () => {
    const acc = await org.account("Renamed Co");
    const deals = [await org.deal({ title: "one", account_id: acc.id, stage: "proposal" }), await org.deal({ title: "two", account_id: acc.id, stage: "proposal" })];
    const s = await stageOf(org, "proposal");
    const changed = await org.ok("PATCH", `/pipeline-stages/${s.id}`, { name: "Offer sent", color: "#ABCDEF", probability: "60" });
    expect(changed).toMatchObject({ id: s.id, key: "proposal", name: "Offer sent", color: "#abcdef", probability: 60, position: s.position });
    for (const d of deals) expect(await org.ok("GET", `/deals/${d.id}`)).toMatchObject({ pipeline_stage_name: "Offer sent", pipeline_stage_color: "#abcdef" });
    const page = await org.list("stage=proposal");
    expect(page.items.map((d: any) => d.pipeline_stage_name)).toEqual(["Offer sent", "Offer sent"]);
    const row = (await audits("crm.stage_updated")).at(-1)!;
    expect(row.user_id).toBe(org.user.id);
    expect(JSON.parse(row.detail)).toEqual({
      stage_id: s.id,
      key: "proposal",
      changed: { name: { from: "Proposal", to: "Offer sent" }, color: { from: "#8b5cf6", to: "#abcdef" }, probability: { from: 50, to: 60 } },
    });
  });

  test("won and lost: marking one clears the other; both at once is 422; an unchanged patch writes no audit row", async () => {
    const s = await stageOf(org, "negotiation");
    expect(await org.ok("PATCH", `/pipeline-stages/${s.id}`, { is_lost: true })).toMatchObject({ is_won: false, is_lost: true });
    expect(await org.ok("PATCH", `/pipeline-stages/${s.id}`, { is_won: true })).toMatchObject({ is_won: true, is_lost: false });
    const both = await org.call("PATCH", `/pipeline-stages/${s.id}`, { is_won: true, is_lost: true });
    expect(both.status).toBe(422);
    expect(items422(both.body)).toEqual([{ loc: ["body", "is_lost"], type: "value_error" }]);
    const acc = await org.account("Outcome Co");
    expect(await org.deal({ title: "won now", account_id: acc.id, stage: "negotiation" })).toMatchObject({ is_won: true, is_lost: false });
    const before = (await audits("crm.stage_updated")).length;
    await org.ok("PATCH", `/pipeline-stages/${s.id}`, { is_won: true, name: (await stageOf(org, "negotiation")).name });
    expect((await audits("crm.stage_updated")).length).toBe(before);
    await org.ok("PATCH", `/pipeline-stages/${s.id}`, { is_won: false });
  });

  test("bad fields are 422 with their loc; the key cannot be changed", async () => {
    const s = await stageOf(org, "new");
    for (const [body, loc, type] of [
      [{ name: "" }, ["body", "name"], "string_too_short"],
      [{ color: "red" }, ["body", "color"], "string_pattern_mismatch"],
      [{ probability: 101 }, ["body", "probability"], "less_than_equal"],
      [{ name: "a\nb" }, ["body", "name"], "string_pattern_mismatch"],
    ] as const) {
      const r = await org.call("PATCH", `/pipeline-stages/${s.id}`, body);
      expect(r.status).toBe(422);
      expect(r.body.detail[0]).toMatchObject({ loc, type });
    }
    const r = await org.ok("PATCH", `/pipeline-stages/${s.id}`, { key: "renamed" });
    expect(r.key).toBe("new");
  });

  test("unknown ids and other tenants' stages are 404; members get 403 before their body is read", async () => {
    const theirs = await stageOf(other, "new");
    expect((await org.call("PATCH", `/pipeline-stages/${theirs.id}`, { name: "Mine now" })).status).toBe(404);
    expect((await org.call("PATCH", "/pipeline-stages/nope", { name: "x" })).body.code).toBe("not_found");
    expect((await stageOf(other, "new")).name).toBe("New");
    const m = await addMember(t, org.tenant.id, "stage-member@stageorg.test", "member password 1");
    const token = (await login(t, m.email, m.password, { "x-tenant": "stageorg" })).body.access_token;
    const s = await stageOf(org, "new");
    for (const [method, path, body] of [
      ["PATCH", `/pipeline-stages/${s.id}`, { name: "" }],
      ["POST", "/pipeline-stages/reorder", { ids: "junk" }],
      ["DELETE", `/pipeline-stages/${s.id}?move_to=won`, undefined],
    ] as const) {
      const r = await t.json(method, `/api/v1/crm${path}`, { token, body });
      expect({ status: r.status, code: r.body.code }).toEqual({ status: 403, code: "forbidden" });
    }
  });
});

describe("reordering", () => {
  test("every id once, in the new order, sets the positions the list follows", async () => {
    const before = (await org.ok("GET", "/pipeline-stages")) as Array<{ id: string; key: string }>;
    const ids = before.map((s) => s.id).reverse();
    const after = await org.ok("POST", "/pipeline-stages/reorder", { ids }, 200);
    expect(after.map((s: any) => s.id)).toEqual(ids);
    expect(after.map((s: any) => s.position)).toEqual(ids.map((_, i) => i));
    expect(((await org.ok("GET", "/pipeline-stages")) as any[]).map((s) => s.id)).toEqual(ids);
    expect(JSON.parse((await audits("crm.stages_reordered")).at(-1)!.detail)).toEqual({ ids });
    await org.ok("POST", "/pipeline-stages/reorder", { ids: before.map((s) => s.id) }, 200);
  });

  test("a missing, repeated, unknown or foreign id is 422 and changes nothing", async () => {
    const ids = ((await org.ok("GET", "/pipeline-stages")) as any[]).map((s) => s.id as string);
    const theirs = (await stageOf(other, "new")).id;
    for (const bad of [ids.slice(1), [...ids, ids[0]], [...ids.slice(1), ids[1]], [...ids.slice(1), "unknown"], [...ids.slice(1), theirs], []]) {
      const r = await org.call("POST", "/pipeline-stages/reorder", { ids: bad });
      expect(r.status).toBe(422);
      expect(r.body.detail[0].loc).toEqual(["body", "ids"]);
    }
    expect(((await org.ok("GET", "/pipeline-stages")) as any[]).map((s) => s.id)).toEqual(ids);
  });
});

describe("deleting a stage", () => {
  test("its deals move to move_to in the same transaction; counts, filters and search follow", async () => {
    const gone = await org.ok("POST", "/pipeline-stages", { key: "parked", name: "Parked" });
    const acc = await org.account("Parking Lot");
    const deals = [];
    for (const title of ["Wombat parked", "Numbat parked", "Quokka parked"]) deals.push(await org.deal({ title, account_id: acc.id, stage: "parked", assigned_to: org.user.id }));
    const wonBefore = (await org.list("stage=won")).total;
    const missing = await org.call("DELETE", `/pipeline-stages/${gone.id}`);
    expect(missing.status).toBe(422);
    expect(items422(missing.body)).toEqual([{ loc: ["query", "move_to"], type: "missing" }]);
    const self = await org.call("DELETE", `/pipeline-stages/${gone.id}?move_to=parked`);
    expect(items422(self.body)).toEqual([{ loc: ["query", "move_to"], type: "value_error" }]);
    const unknown = await org.call("DELETE", `/pipeline-stages/${gone.id}?move_to=nowhere`);
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0]).toMatchObject({ loc: ["query", "move_to"], type: "literal_error" });
    // Another tenant's own stage key is unknown here.
    await other.ok("POST", "/pipeline-stages", { key: "their-stage", name: "Theirs" });
    expect((await org.call("DELETE", `/pipeline-stages/${gone.id}?move_to=their-stage`)).status).toBe(422);
    expect((await org.list("stage=parked")).total).toBe(3);

    const r = await org.call("DELETE", `/pipeline-stages/${gone.id}?move_to=won`);
    expect(r.status).toBe(204);
    expect(((await org.ok("GET", "/pipeline-stages")) as any[]).some((s) => s.key === "parked")).toBe(false);
    for (const d of deals) expect(await org.ok("GET", `/deals/${d.id}`)).toMatchObject({ stage: "won", is_won: true, pipeline_stage_name: "Won" });
    expect((await org.list("stage=won")).total).toBe(wonBefore + 3);
    expect((await org.list(`stage=won&assigned_to=${org.user.id}&search=parked`)).total).toBe(3);
    expect((await org.list("search=wombat%20parked")).items.map((d: any) => d.stage)).toEqual(["won"]);
    expect(await counts(org.tenant.id)).toEqual((await trueCounts(org.tenant.id)));
    expect(await testSql(t.ctx).get("SELECT count(*) AS n FROM deal_counts WHERE tenant_id = ?1 AND stage = 'parked'", org.tenant.id)).toEqual({ n: 0 });
    expect(JSON.parse((await audits("crm.stage_deleted")).at(-1)!.detail)).toEqual({ stage_id: gone.id, key: "parked", name: "Parked", move_to: "won", moved_deals: 3 });
  });

  test("a stage without deals needs no move_to; a stage made again with the old key starts empty", async () => {
    const s = await org.ok("POST", "/pipeline-stages", { key: "spare", name: "Spare" });
    expect((await org.call("DELETE", `/pipeline-stages/${s.id}`)).status).toBe(204);
    expect((await org.call("DELETE", `/pipeline-stages/${s.id}`)).status).toBe(404);
    await org.ok("POST", "/pipeline-stages", { key: "spare", name: "Spare again" });
    expect((await org.list("stage=spare")).total).toBe(0);
  });

  test("another tenant's stage is 404; the last stage is 409 last_stage", async () => {
    const theirs = await stageOf(other, "lost");
    expect((await org.call("DELETE", `/pipeline-stages/${theirs.id}?move_to=new`)).status).toBe(404);
    expect(await stageOf(other, "lost")).toBeDefined();
    const solo = await crmOrg(t, "stagesolo");
    const stages = (await solo.ok("GET", "/pipeline-stages")) as any[];
    const acc = await solo.account("Solo");
    await solo.deal({ title: "lonely", account_id: acc.id, stage: "lost" });
    for (const s of stages.slice(0, -1)) expect((await solo.call("DELETE", `/pipeline-stages/${s.id}?move_to=lost`)).status).toBe(204);
    const last = await solo.call("DELETE", `/pipeline-stages/${stages.at(-1).id}`);
    expect({ status: last.status, code: last.body.code }).toEqual({ status: 409, code: "last_stage" });
    expect((await solo.list()).total).toBe(1);
  });
});
