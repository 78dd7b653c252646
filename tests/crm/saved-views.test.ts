import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { login } from "../auth/support";
import { testApp } from "../helpers";
import { insertUser } from "../support/sql";
import { type CrmOrg, crmOrg, items422 } from "./support";

// Saved views of the deal list through the API: who sees and changes which view, each member's
// own default, the list's validation rules on a view's query, and another organization (404).

const t = testApp();
let org: CrmOrg;
let other: CrmOrg;
let memberToken: string;
let member2Token: string;
const MEMBER_ID = "views-member";

const as = (token: string) => (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
  t.json(method, `/api/v1/crm/views${path}`, { token, body, headers });
let admin: ReturnType<typeof as>;
let member: ReturnType<typeof as>;
let member2: ReturnType<typeof as>;

const addMember = async (id: string, email: string, name: string) => {
  const hash = await t.ctx.hasher.hash("member password");
  await insertUser(t.ctx, { id, tenant_id: org.tenant.id, email, full_name: name, role: "member", profile_id: null, password_hash: hash, created_at: t.ctx.now() });
  return (await login(t, email, "member password", { "x-tenant": "viewsorg" })).body.access_token as string;
};

beforeAll(async () => {
  org = await crmOrg(t, "viewsorg");
  other = await crmOrg(t, "viewsother");
  memberToken = await addMember(MEMBER_ID, "member@viewsorg.test", "Mia Member");
  member2Token = await addMember("views-member-2", "member2@viewsorg.test", "Max Member");
  admin = as(org.token);
  member = as(memberToken);
  member2 = as(member2Token);
});
afterAll(() => t.close());

describe("saved views", () => {
  test("create answers the whole view; personal views are their owner's alone", async () => {
    const r = await member("POST", "", { name: " My open deals ", kind: "board", query: { stage: ["new", "proposal"], mine: true, sort_by: "value", sort_dir: "desc", size: 50 }, shared: false });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      name: "My open deals", kind: "board", query: { stage: ["new", "proposal"], mine: true, sort_by: "value", sort_dir: "desc", size: 50 },
      columns: null, shared: false, owner: { id: MEMBER_ID, name: "Mia Member" }, is_default: false,
    });
    expect(r.body.created_at).toBe(r.body.updated_at);
    const mine = await member("GET", "");
    expect(mine.body.map((v: { id: string }) => v.id)).toContain(r.body.id);
    // Another member and an admin: not listed, 404 on change and delete.
    expect((await member2("GET", "")).body.map((v: { id: string }) => v.id)).not.toContain(r.body.id);
    expect((await admin("GET", "")).body.map((v: { id: string }) => v.id)).not.toContain(r.body.id);
    expect((await member2("PATCH", `/${r.body.id}`, { name: "Mine now" })).status).toBe(404);
    expect((await admin("DELETE", `/${r.body.id}`)).status).toBe(404);
    // The owner changes and deletes it.
    const renamed = await member("PATCH", `/${r.body.id}`, { name: "Renamed", columns: ["title", "value"], kind: "table" });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: "Renamed", columns: ["title", "value"], kind: "table", query: { mine: true } });
    expect((await member("DELETE", `/${r.body.id}`)).status).toBe(204);
    expect((await member("PATCH", `/${r.body.id}`, { name: "Gone" })).status).toBe(404);
  });

  test("shared views: every member sees them; only admins create, change or delete them", async () => {
    const refused = await member("POST", "", { name: "Team", kind: "table", query: {}, shared: true });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("shared_view_admin_only");
    const shared = await admin("POST", "", { name: "Team pipeline", kind: "table", query: { unassigned: true }, shared: true });
    expect(shared.status).toBe(201);
    expect(shared.body.owner.id).toBe(org.user.id);
    expect((await member("GET", "")).body.map((v: { id: string }) => v.id)).toContain(shared.body.id);
    for (const [method, body] of [["PATCH", { name: "Hijack" }], ["DELETE", undefined]] as const) {
      const r = await member(method, `/${shared.body.id}`, body);
      expect(r.status).toBe(403);
      expect(r.body.code).toBe("shared_view_admin_only");
    }
    // A member cannot share their personal view either.
    const own = await member("POST", "", { name: "Own", kind: "table", query: {}, shared: false });
    expect((await member("PATCH", `/${own.body.id}`, { shared: true })).status).toBe(403);
    expect((await admin("PATCH", `/${shared.body.id}`, { name: "Team deals" })).body.name).toBe("Team deals");
    expect((await admin("DELETE", `/${shared.body.id}`)).status).toBe(204);
    expect((await member("GET", "")).body.map((v: { id: string }) => v.id)).not.toContain(shared.body.id);
  });

  test("each member has one default view, their own even for a shared view; deleting the view clears it", async () => {
    const shared = (await admin("POST", "", { name: "Shared default", kind: "board", query: {}, shared: true })).body;
    const own = (await member("POST", "", { name: "Own default", kind: "table", query: { search: "acme" }, shared: false })).body;
    // A member may make a shared view their default (not a change of the view).
    expect((await member("PATCH", `/${shared.id}`, { is_default: true })).body.is_default).toBe(true);
    expect((await member2("GET", "")).body.find((v: { id: string }) => v.id === shared.id).is_default).toBe(false);
    expect((await admin("GET", "")).body.find((v: { id: string }) => v.id === shared.id).is_default).toBe(false);
    // A second default replaces the first.
    expect((await member("PATCH", `/${own.id}`, { is_default: true })).body.is_default).toBe(true);
    const defaults = (await member("GET", "")).body.filter((v: { is_default: boolean }) => v.is_default).map((v: { id: string }) => v.id);
    expect(defaults).toEqual([own.id]);
    // Unset.
    expect((await member("PATCH", `/${own.id}`, { is_default: false })).body.is_default).toBe(false);
    expect((await member("GET", "")).body.some((v: { is_default: boolean }) => v.is_default)).toBe(false);
    // Deleted: nobody's default any more.
    await member2("PATCH", `/${shared.id}`, { is_default: true });
    expect((await admin("DELETE", `/${shared.id}`)).status).toBe(204);
    const again = (await admin("POST", "", { name: "Shared default", kind: "board", query: {}, shared: true })).body;
    expect((await member2("GET", "")).body.some((v: { is_default: boolean }) => v.is_default)).toBe(false);
    await admin("DELETE", `/${again.id}`);
  });

  test("a view's query follows the deal list's rules: 422 in FastAPI's shape", async () => {
    const bad = async (query: unknown, extra: Record<string, unknown> = {}) => {
      const r = await member("POST", "", { name: "Bad", kind: "table", query, shared: false, ...extra });
      expect(r.status).toBe(422);
      return items422(r.body);
    };
    expect(await bad({ assigned_to: "x", mine: true })).toEqual([{ loc: ["body", "query", "mine"], type: "value_error" }]);
    expect((await bad({ sort_by: "colour" }))[0]!.loc).toEqual(["body", "query", "sort_by"]);
    expect((await bad({ size: 101 }))[0]!.loc).toEqual(["body", "query", "size"]);
    expect((await bad({ search: "a\nb" }))[0]!.loc).toEqual(["body", "query", "search"]);
    // A name the list does not know is dropped, as Elysia drops unknown fields (a view opens at page 1).
    const dropped = await member("POST", "", { name: "Paged", kind: "table", query: { page: 2, mine: true }, shared: false });
    expect(dropped.body.query).toEqual({ mine: true });
    await member("DELETE", `/${dropped.body.id}`);
    expect((await bad({}, { kind: "list" }))[0]!.loc).toEqual(["body", "kind"]);
    expect((await bad({}, { name: "" }))[0]!.loc).toEqual(["body", "name"]);
    expect((await bad({}, { name: "x".repeat(81) }))[0]!.loc).toEqual(["body", "name"]);
    // The same on a change.
    const v = (await member("POST", "", { name: "Valid", kind: "table", query: {}, shared: false })).body;
    const r = await member("PATCH", `/${v.id}`, { query: { unassigned: true, mine: true } });
    expect(r.status).toBe(422);
    expect(items422(r.body)).toEqual([{ loc: ["body", "query", "mine"], type: "value_error" }]);
    await member("DELETE", `/${v.id}`);
  });

  test("at most 50 views per member: the 51st is 409 view_limit_reached", async () => {
    const existing = (await member2("GET", "")).body.filter((v: { owner: { id: string } }) => v.owner.id === "views-member-2").length;
    for (let i = existing; i < 50; i++) expect((await member2("POST", "", { name: `View ${i}`, kind: "table", query: {}, shared: false })).status).toBe(201);
    const r = await member2("POST", "", { name: "One too many", kind: "table", query: {}, shared: false });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("view_limit_reached");
    // Others are not counted against it.
    expect((await member("POST", "", { name: "Still fine", kind: "table", query: {}, shared: false })).status).toBe(201);
  });

  test("Idempotency-Key: a retry answers the first view and writes nothing", async () => {
    const body = { name: "Once", kind: "table", query: {}, shared: false };
    const first = await member("POST", "", body, { "Idempotency-Key": "views-once" });
    const again = await member("POST", "", body, { "Idempotency-Key": "views-once" });
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect((await member("GET", "")).body.filter((v: { name: string }) => v.name === "Once").length).toBe(1);
  });

  test("another organization's view is 404, and its list has none of ours", async () => {
    const shared = (await admin("POST", "", { name: "Ours", kind: "table", query: {}, shared: true })).body;
    const theirs = as(other.token);
    expect((await theirs("GET", "")).body).toEqual([]);
    expect((await theirs("PATCH", `/${shared.id}`, { is_default: true })).status).toBe(404);
    expect((await theirs("DELETE", `/${shared.id}`)).status).toBe(404);
  });
});
