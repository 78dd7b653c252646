import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Pg } from "../../src/stores/postgres/database";
import { login } from "../auth/support";
import { testApp } from "../helpers";
import { insertUser, testSql } from "../support/sql";
import { type CrmOrg, crmOrg, items422 } from "./support";

// A deal's timeline and notes through the API: what each write records, in its own transaction;
// who may change a note; and what another organization sees (nothing).

const t = testApp();
let org: CrmOrg;
let other: CrmOrg;
let account: { id: string };
let memberToken: string;
const MEMBER_ID = "activities-member";

type Entry = { id: string; type: string; created_at: string; actor: { id: string; name: string } | null; data: Record<string, any> };
const timeline = async (o: { token: string }, dealId: string, query = ""): Promise<{ status: number; body: any }> =>
  t.json("GET", `/api/v1/crm/deals/${dealId}/activities${query}`, { token: o.token });
const entries = async (dealId: string): Promise<Entry[]> => {
  const r = await timeline(org, dealId, "?size=100");
  expect(r.status).toBe(200);
  return r.body.items;
};
const asMember = (method: string, path: string, body?: unknown) => t.json(method, `/api/v1/crm${path}`, { token: memberToken, body });

beforeAll(async () => {
  org = await crmOrg(t, "actorg");
  other = await crmOrg(t, "actother");
  account = await org.account("Acme");
  const hash = await t.ctx.hasher.hash("member password");
  await insertUser(t.ctx, {
    id: MEMBER_ID, tenant_id: org.tenant.id, email: "member@actorg.test", full_name: "Mia Member", role: "member", profile_id: null, password_hash: hash, created_at: t.ctx.now(),
  });
  memberToken = (await login(t, "member@actorg.test", "member password", { "x-tenant": "actorg" })).body.access_token as string;
});
afterAll(() => t.close());

describe("the timeline", () => {
  test("create, field changes (before → after, who) and stage changes are entries, newest first; stage_changed_at moves with the stage only", async () => {
    const d = await org.deal({ title: "Timeline", account_id: account.id, value: "100" });
    expect(d.stage_changed_at).toBe(d.created_at);
    const [created] = await entries(d.id);
    expect(created).toMatchObject({ type: "created", actor: { id: org.user.id }, data: { title: "Timeline", stage: "new", value: "100.00", currency: "USD" } });
    expect(created!.actor!.name.length).toBeGreaterThan(0);

    await Bun.sleep(5);
    const edited = await org.ok("PATCH", `/deals/${d.id}`, { title: "Timeline B", value: 250, probability: 40 });
    expect(edited.stage_changed_at).toBe(d.stage_changed_at);
    let list = await entries(d.id);
    expect(list.map((e) => e.type)).toEqual(["updated", "created"]);
    expect(list[0]!.data.changes).toEqual([
      { field: "title", before: "Timeline", after: "Timeline B" },
      { field: "value", before: "100.00", after: "250.00" },
      { field: "probability", before: 10, after: 40 }, // a new deal takes its stage's probability
    ]);

    await Bun.sleep(5);
    const moved = await asMember("PATCH", `/deals/${d.id}`, { stage: "proposal" });
    expect(moved.status).toBe(200);
    expect(moved.body.stage_changed_at > d.stage_changed_at).toBe(true);
    expect(moved.body.stage_changed_at).toBe(moved.body.updated_at);
    list = await entries(d.id);
    expect(list.map((e) => e.type)).toEqual(["stage_changed", "updated", "created"]);
    expect(list[0]).toMatchObject({ actor: { id: MEMBER_ID, name: "Mia Member" }, data: { from: "new", to: "proposal" } });

    // A write that changes nothing a person sees adds no entry.
    await org.ok("PATCH", `/deals/${d.id}`, { title: "Timeline B" });
    expect((await entries(d.id)).length).toBe(3);
  });

  test("references show names with their ids; long notes are cut in the entry; custom_data is named without its values", async () => {
    const other = await org.account("Globex");
    const contact = await org.contact("Jane", "Doe");
    const d = await org.deal({ title: "Refs", account_id: account.id });
    await org.ok("PATCH", `/deals/${d.id}`, { account_id: other.id, contact_id: contact.id, assigned_to: MEMBER_ID, notes: "x".repeat(900), custom_data: { a: 1 } });
    const [e] = await entries(d.id);
    const by = Object.fromEntries(e!.data.changes.map((c: { field: string }) => [c.field, c]));
    expect(by.account).toEqual({ field: "account", before: "Acme", after: "Globex", before_id: account.id, after_id: other.id });
    expect(by.contact).toEqual({ field: "contact", before: null, after: "Jane Doe", before_id: null, after_id: contact.id });
    expect(by.assignee).toMatchObject({ before: null, after: "Mia Member", after_id: MEMBER_ID });
    expect(by.notes.after).toBe(`${"x".repeat(500)}…`);
    expect(by.custom_data).toEqual({ field: "custom_data", before: null, after: null });
  });

  test("paged like the other lists; a deal of another organization, or none, is a 404", async () => {
    const d = await org.deal({ title: "Paged", account_id: account.id });
    for (let i = 0; i < 4; i++) await org.ok("PATCH", `/deals/${d.id}`, { probability: i * 10 + 1 });
    const page = await timeline(org, d.id, "?size=2&page=2");
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ total: 5, page: 2, size: 2, pages: 3 });
    expect(page.body.items.map((e: Entry) => e.data.changes?.[0]?.after)).toEqual([11, 1]);
    expect((await timeline(other, d.id)).status).toBe(404);
    expect((await timeline(org, "no-such-deal")).status).toBe(404);
    const bad = await timeline(org, d.id, "?size=1000");
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(["query", "size"]);
  });

  test("a write whose entry fails is rolled back whole: the deal is unchanged and no entry is left", async () => {
    const d = await org.deal({ title: "Atomic", account_id: account.id });
    const pg = (t.ctx as { pg?: Pg | null }).pg;
    const sql = testSql(t.ctx);
    if (pg) {
      await pg.unsafe(`CREATE FUNCTION test_refuse_entry() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN
        IF NEW.data LIKE '%refuse-me%' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $f$`);
      await pg.unsafe("CREATE TRIGGER test_refuse_entry BEFORE INSERT ON deal_activities FOR EACH ROW EXECUTE FUNCTION test_refuse_entry()");
    } else {
      await sql.run("CREATE TEMP TRIGGER test_refuse_entry BEFORE INSERT ON deal_activities WHEN new.data LIKE '%refuse-me%' BEGIN SELECT RAISE(ABORT, 'refused'); END");
    }
    try {
      const r = await org.call("PATCH", `/deals/${d.id}`, { title: "refuse-me", stage: "won" });
      expect(r.status).toBe(500);
      const after = await org.ok("GET", `/deals/${d.id}`);
      expect(after).toMatchObject({ title: "Atomic", stage: "new", updated_at: d.updated_at, stage_changed_at: d.stage_changed_at });
      expect((await entries(d.id)).map((e) => e.type)).toEqual(["created"]);
      const created = await org.call("POST", "/deals", { title: "refuse-me", account_id: account.id });
      expect(created.status).toBe(500);
      expect((await sql.get<{ n: number }>("SELECT count(*) AS n FROM deals WHERE tenant_id = ? AND title = 'refuse-me'", org.tenant.id))!.n).toBe(0);
    } finally {
      if (pg) {
        await pg.unsafe("DROP TRIGGER test_refuse_entry ON deal_activities");
        await pg.unsafe("DROP FUNCTION test_refuse_entry()");
      } else await sql.run("DROP TRIGGER test_refuse_entry");
    }
  });

  test("a deal's entries and notes go with the deal", async () => {
    const d = await org.deal({ title: "Gone", account_id: account.id });
    await org.ok("POST", `/deals/${d.id}/notes`, { body: "soon gone" });
    const sql = testSql(t.ctx);
    const count = async (table: string) => (await sql.get<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = ? AND deal_id = ?`, org.tenant.id, d.id))!.n;
    expect(await count("deal_activities")).toBe(2);
    expect(await count("deal_notes")).toBe(1);
    expect((await org.call("DELETE", `/deals/${d.id}`)).status).toBe(204);
    expect(await count("deal_activities")).toBe(0);
    expect(await count("deal_notes")).toBe(0);
  });
});

describe("notes", () => {
  test("POST answers 201 with the note; it shows in the timeline with its author; PATCH changes it there too", async () => {
    const d = await org.deal({ title: "Noted", account_id: account.id });
    const r = await asMember("POST", `/deals/${d.id}/notes`, { body: "  Called them.\nThey want a demo.  " });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(["author", "body", "created_at", "deal_id", "id", "updated_at"]);
    expect(r.body).toMatchObject({ body: "Called them.\nThey want a demo.", deal_id: d.id, author: { id: MEMBER_ID, name: "Mia Member" } });
    expect(r.body.updated_at).toBe(r.body.created_at);
    let [entry] = await entries(d.id);
    expect(entry).toMatchObject({ id: r.body.id, type: "note", actor: { id: MEMBER_ID }, data: { note: r.body } });

    await Bun.sleep(5);
    const changed = await asMember("PATCH", `/notes/${r.body.id}`, { body: "Demo booked." });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ id: r.body.id, body: "Demo booked.", created_at: r.body.created_at });
    expect(changed.body.updated_at > r.body.updated_at).toBe(true);
    [entry] = await entries(d.id);
    expect(entry!.data.note).toEqual(changed.body);
  });

  test("only the author or an admin changes or deletes a note: others get 403 not_note_author", async () => {
    const d = await org.deal({ title: "Owned", account_id: account.id });
    const adminNote = await org.ok("POST", `/deals/${d.id}/notes`, { body: "admin's" });
    for (const [method, body] of [["PATCH", { body: "mine now" }], ["DELETE", undefined]] as const) {
      const r = await asMember(method, `/notes/${adminNote.id}`, body);
      expect(r.status).toBe(403);
      expect(r.body.code).toBe("not_note_author");
      expect(r.body.detail).toMatch(/author or an admin/);
    }
    expect((await org.ok("GET", `/deals/${d.id}/activities`)).items[0].data.note.body).toBe("admin's");
    const memberNote = (await asMember("POST", `/deals/${d.id}/notes`, { body: "member's" })).body;
    expect((await org.call("PATCH", `/notes/${memberNote.id}`, { body: "edited by an admin" })).status).toBe(200);
    expect((await asMember("DELETE", `/notes/${memberNote.id}`)).status).toBe(204);
    expect((await org.call("DELETE", `/notes/${adminNote.id}`)).status).toBe(204);
    expect((await entries(d.id)).map((e) => e.type)).toEqual(["created"]);
    expect((await org.call("DELETE", `/notes/${adminNote.id}`)).status).toBe(404);
  });

  test("422s in FastAPI's shape: missing, blank, too long, control characters; 404s for unknown deals and notes", async () => {
    const d = await org.deal({ title: "Strict", account_id: account.id });
    const post = (body: unknown) => org.call("POST", `/deals/${d.id}/notes`, body);
    const missing = await post({});
    expect(missing.status).toBe(422);
    expect(items422(missing.body)[0]).toMatchObject({ loc: ["body", "body"], type: "missing" });
    const blank = await post({ body: "   " });
    expect(blank.status).toBe(422);
    expect(items422(blank.body)).toEqual([{ loc: ["body", "body"], type: "value_error" }]);
    const long = await post({ body: "a".repeat(10_001) });
    expect(long.status).toBe(422);
    expect(items422(long.body)[0]).toMatchObject({ loc: ["body", "body"], type: "string_too_long" });
    expect((await post({ body: "a".repeat(10_000) })).status).toBe(201);
    const control = await post({ body: "bell\u0007" });
    expect(control.status).toBe(422);
    expect(control.body.detail[0].loc).toEqual(["body", "body"]);
    expect((await org.call("POST", "/deals/nope/notes", { body: "x" })).status).toBe(404);
    expect((await org.call("PATCH", "/notes/nope", { body: "x" })).status).toBe(404);
    const n = (await post({ body: "fine" })).body;
    expect((await org.call("PATCH", `/notes/${n.id}`, { body: "" })).status).toBe(422);
  });

  test("another organization can neither add to, read, change nor delete a deal's notes", async () => {
    const d = await org.deal({ title: "Private", account_id: account.id });
    const n = await org.ok("POST", `/deals/${d.id}/notes`, { body: "ours" });
    expect((await other.call("POST", `/deals/${d.id}/notes`, { body: "theirs" })).status).toBe(404);
    expect((await other.call("PATCH", `/notes/${n.id}`, { body: "theirs" })).status).toBe(404);
    expect((await other.call("DELETE", `/notes/${n.id}`)).status).toBe(404);
    expect((await entries(d.id)).map((e) => e.type)).toEqual(["note", "created"]);
    expect((await org.ok("GET", `/deals/${d.id}/activities`)).items[0].data.note.body).toBe("ours");
  });

  test("Idempotency-Key: a retried create answers the same note once", async () => {
    const d = await org.deal({ title: "Once", account_id: account.id });
    const send = () => t.json("POST", `/api/v1/crm/deals/${d.id}/notes`, { token: org.token, body: { body: "once" }, headers: { "idempotency-key": "note-1" } });
    const first = await send();
    const again = await send();
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await entries(d.id)).filter((e) => e.type === "note").length).toBe(1);
  });

  test("an organization without the CRM gets 403 module_disabled", async () => {
    const bare = await crmOrg(t, "actnocrm", { initial_modules: ["users"] });
    const r = await bare.call("POST", "/deals/any/notes", { body: "x" });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe("module_disabled");
  });
});
