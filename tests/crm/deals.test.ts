import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeTx } from "../../src/db/database";
import type { Pg, PgTx } from "../../src/stores/postgres/database";
import { testApp, sqliteRepos } from "../helpers";
import { type CrmOrg, type Deal, addUser, crmOrg } from "./support";
import { testSql } from "../support/sql";
import { orderedId } from "../../src/kernel/ids";

const t = testApp();
let org: CrmOrg;
let other: CrmOrg;
let account: { id: string };
let otherAccount: { id: string };

beforeAll(async () => {
  org = await crmOrg(t, "dealsorg");
  other = await crmOrg(t, "dealsother");
  account = await org.account("Acme");
  otherAccount = await other.account("Theirs");
});
afterAll(() => t.close());

/**
 * A user's name and email changed in the users table and passed on to their deals in one
 * transaction, through the store's `assigneeRenamedInTx` (what a rename does inside the store).
 */
async function renameUser(tenantId: string, userId: string, fullName: string | null, email: string) {
  const pg = (t.ctx as { pg?: Pg | null }).pg;
  if (pg) {
    const crm = t.ctx.repos.crm as unknown as { assigneeRenamedInTx: (tx: PgTx, ...a: [string, string, string | null, string]) => Promise<void> };
    await pg.begin(async (tx) => {
      await tx.unsafe("UPDATE users SET full_name = $1, email = $2 WHERE id = $3", [fullName, email, userId]);
      await crm.assigneeRenamedInTx(tx, tenantId, userId, fullName, email);
    });
    return;
  }
  writeTx(t.ctx.db, () => {
    t.ctx.db.run("UPDATE users SET full_name = ?1, email = ?2 WHERE id = ?3", [fullName, email, userId]);
    sqliteRepos(t.ctx).crm.assigneeRenamedInTx(tenantId, userId, fullName, email);
  });
}

const post = (body: Record<string, unknown>) => org.call("POST", "/deals", body);

describe("create and read", () => {
  test("POST answers 201 with the whole DealRead and its defaults; GET answers the same", async () => {
    const r = await post({ title: "  First deal ", account_id: account.id });
    expect(r.status).toBe(201);
    const d = r.body;
    expect(d).toMatchObject({
      title: "First deal",
      account_id: account.id,
      tenant_id: org.tenant.id,
      value: "0.00",
      currency: "USD",
      stage: "new",
      close_date: null,
      probability: 10, // the "new" stage's probability: omitted means the stage's
      assigned_to: null,
      notes: null,
      custom_data: null,
      contact_id: null,
      pipeline_stage_name: "New",
      pipeline_stage_color: "#64748b",
      is_won: false,
      is_lost: false,
      account_name: "Acme",
      contact_name: null,
      assignee_name: null,
      assignee_email: null,
    });
    expect(typeof d.pipeline_stage_id).toBe("string");
    expect(d.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(d.updated_at).toBe(d.created_at);
    expect(Object.keys(d).sort()).toEqual(
      [
        "id", "tenant_id", "title", "account_id", "value", "currency", "stage", "close_date", "probability", "assigned_to", "notes",
        "custom_data", "contact_id", "pipeline_stage_id", "pipeline_stage_name", "pipeline_stage_color", "is_won", "is_lost",
        "account_name", "contact_name", "assignee_name", "assignee_email", "created_at", "updated_at", "stage_changed_at",
      ].sort(),
    );
    expect(d.stage_changed_at).toBe(d.created_at);
    expect(await org.ok("GET", `/deals/${d.id}`)).toEqual(d);
  });

  test("every writable field is stored and answered", async () => {
    const contact = await org.contact("Jane", "Doe");
    const d = await org.deal({
      title: "Full",
      account_id: account.id,
      contact_id: contact.id,
      assigned_to: org.user.id,
      stage: "won",
      value: "1234.5",
      currency: "EUR",
      close_date: "2030-02-28",
      probability: 100,
      notes: "Signed.",
      custom_data: { source: "web", tags: ["a", "b"], nested: { n: 1.5, ok: true, none: null } },
    });
    expect(d).toMatchObject({
      value: "1234.50",
      currency: "EUR",
      stage: "won",
      is_won: true,
      is_lost: false,
      pipeline_stage_name: "Won",
      close_date: "2030-02-28",
      probability: 100,
      notes: "Signed.",
      custom_data: { source: "web", tags: ["a", "b"], nested: { n: 1.5, ok: true, none: null } },
      contact_name: "Jane Doe",
      assignee_email: org.email,
      assigned_to: org.user.id,
    });
  });

  test("new deals, accounts and contacts get ids led by the second they were made in (their id indexes grow at one end)", async () => {
    // The heads orderedId gives the seconds before and after: every new id's head lies between them.
    const headAt = () => orderedId(Math.floor(Date.now() / 1000)).slice(0, 6);
    const before = headAt();
    const acc = await org.account("Ordered Ltd");
    const contact = await org.contact("Ada", "Ordered", { account_id: acc.id });
    const first = await org.deal({ title: "Ordered 1", account_id: acc.id, contact_id: contact.id });
    const second = await org.deal({ title: "Ordered 2", account_id: acc.id });
    const after = headAt();
    for (const id of [acc.id, contact.id, first.id, second.id]) {
      expect(id.slice(0, 6) >= before).toBe(true);
      expect(id.slice(0, 6) <= after).toBe(true);
    }
    expect(first.id.slice(0, 6) <= second.id.slice(0, 6)).toBe(true);
  });

  test("tenant_id, id and created_at in a body are ignored", async () => {
    const d = await org.deal({ title: "Mine", account_id: account.id, tenant_id: other.tenant.id, id: "chosen", created_at: "2000-01-01T00:00:00Z" });
    expect(d.tenant_id).toBe(org.tenant.id);
    expect(d.id).not.toBe("chosen");
    expect(d.created_at).not.toBe("2000-01-01T00:00:00.000Z");
    expect((await other.list("search=mine")).total).toBe(0);
  });
});

describe("references", () => {
  test("unknown or another tenant's account_id, contact_id or assigned_to: 404", async () => {
    const theirContact = await other.contact("Their", "Contact");
    for (const body of [
      { title: "x", account_id: "nope" },
      { title: "x", account_id: otherAccount.id },
      { title: "x", account_id: account.id, contact_id: theirContact.id },
      { title: "x", account_id: account.id, assigned_to: other.user.id },
      { title: "x", account_id: account.id, assigned_to: "nobody" },
    ]) {
      const r = await post(body);
      expect(r.status).toBe(404);
      expect(r.body.code).toBe("not_found");
    }
    const d = await org.deal({ title: "x", account_id: account.id });
    expect((await org.call("PATCH", `/deals/${d.id}`, { account_id: otherAccount.id })).status).toBe(404);
    expect((await org.call("PATCH", `/deals/${d.id}`, { assigned_to: other.user.id })).status).toBe(404);
  });

  test("another tenant's or an unknown deal id: 404 on GET, PATCH and DELETE", async () => {
    const theirs = await other.deal({ title: "theirs", account_id: otherAccount.id });
    for (const id of [theirs.id, "unknown"]) {
      expect((await org.call("GET", `/deals/${id}`)).status).toBe(404);
      expect((await org.call("PATCH", `/deals/${id}`, { title: "stolen" })).status).toBe(404);
      expect((await org.call("DELETE", `/deals/${id}`)).status).toBe(404);
    }
    expect((await other.ok("GET", `/deals/${theirs.id}`)).title).toBe("theirs");
  });
});

describe("patch and delete", () => {
  test("PATCH changes only the given fields; null clears a nullable one; stage brings its pipeline data", async () => {
    const d = await org.deal({ title: "p", account_id: account.id, notes: "keep?", probability: 20, value: "5" });
    const p = await org.ok("PATCH", `/deals/${d.id}`, { stage: "lost", notes: null });
    expect(p).toMatchObject({ title: "p", value: "5.00", probability: 20, notes: null, stage: "lost", is_lost: true, is_won: false, pipeline_stage_name: "Lost" });
    expect(p.created_at).toBe(d.created_at);
    const bad = await org.call("PATCH", `/deals/${d.id}`, { title: null, account_id: null, stage: "gone" });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((i: { loc: unknown[] }) => i.loc[1])).toEqual(["title", "account_id"]);
    const stage = await org.call("PATCH", `/deals/${d.id}`, { stage: "gone" });
    expect(stage.status).toBe(422);
    expect(stage.body.detail[0].loc).toEqual(["body", "stage"]);
  });

  test("DELETE answers 204 with no body; the deal is gone", async () => {
    const d = await org.deal({ title: "bye", account_id: account.id });
    const r = await org.call("DELETE", `/deals/${d.id}`);
    expect(r.status).toBe(204);
    expect(r.body).toBeNull();
    expect((await org.call("GET", `/deals/${d.id}`)).status).toBe(404);
    expect((await org.call("DELETE", `/deals/${d.id}`)).status).toBe(404);
  });
});

describe("counts stay exact", () => {
  test("after create, update, delete, stage change and reassignment", async () => {
    const team = await crmOrg(t, "countorg");
    const acc = await team.account("Counted");
    const u1 = await addUser(t, team.tenant.id, "u1@countorg.test", "User One");
    const u2 = await addUser(t, team.tenant.id, "u2@countorg.test", "User Two");
    const truth = async (where: string, ...args: string[]) =>
      (await testSql(t.ctx).get<{ n: number }>(`SELECT count(*) AS n FROM deals WHERE tenant_id = ?${where}`, team.tenant.id, ...args))!.n;
    const expectCounts = async () => {
      expect((await team.list()).total).toBe((await truth("")));
      for (const s of ["new", "won", "lost"]) expect((await team.list(`stage=${s}`)).total).toBe((await truth(" AND stage = ?", s)));
      expect((await team.list("stage=new&stage=won")).total).toBe((await truth(" AND stage IN ('new', 'won')")));
      for (const u of [u1, u2]) expect((await team.list(`assigned_to=${u}`)).total).toBe((await truth(" AND assigned_to = ?", u)));
      expect((await team.list("unassigned=true")).total).toBe((await truth(" AND assigned_to IS NULL")));
      expect((await team.list(`assigned_to=${u1}&stage=won`)).total).toBe((await truth(" AND assigned_to = ? AND stage = 'won'", u1)));
    };
    const made: Deal[] = [];
    for (let i = 0; i < 6; i++) made.push(await team.deal({ title: `d${i}`, account_id: acc.id, assigned_to: i % 3 === 0 ? null : i % 3 === 1 ? u1 : u2 }));
    await expectCounts();
    expect((await team.list()).total).toBe(6);
    await team.ok("PATCH", `/deals/${made[0]!.id}`, { stage: "won" });
    await team.ok("PATCH", `/deals/${made[1]!.id}`, { stage: "won", assigned_to: u2 });
    await team.ok("PATCH", `/deals/${made[2]!.id}`, { assigned_to: null });
    await team.ok("PATCH", `/deals/${made[3]!.id}`, { assigned_to: u1, stage: "lost" });
    await team.ok("PATCH", `/deals/${made[4]!.id}`, { title: "renamed only" });
    await expectCounts();
    await team.call("DELETE", `/deals/${made[1]!.id}`);
    await team.call("DELETE", `/deals/${made[3]!.id}`);
    await expectCounts();
    expect((await team.list()).total).toBe(4);
    expect((await team.list("stage=won")).total).toBe(1);
  });
});

describe("renames show at once", () => {
  test("account and contact renames, in GET, list and sort order", async () => {
    const team = await crmOrg(t, "renameorg");
    const a = await team.account("Zulu Corp");
    const b = await team.account("Mike Corp");
    const c = await team.contact("Zed", "Last", { account_id: a.id });
    const c2 = await team.contact("Mia", null);
    const d1 = await team.deal({ title: "one", account_id: a.id, contact_id: c.id });
    const d2 = await team.deal({ title: "two", account_id: b.id, contact_id: c2.id });
    const order = async (field: string) => (await team.list(`sort_by=${field}`)).items.map((d: Deal) => d.id);
    expect(await order("account_name")).toEqual([d2.id, d1.id]);
    expect(await order("contact_name")).toEqual([d2.id, d1.id]);
    await team.ok("PATCH", `/accounts/${a.id}`, { name: "Alpha Corp" });
    await team.ok("PATCH", `/contacts/${c.id}`, { first_name: "Abe" });
    expect((await team.ok("GET", `/deals/${d1.id}`)).account_name).toBe("Alpha Corp");
    expect((await team.list()).items.find((d: Deal) => d.id === d1.id).contact_name).toBe("Abe Last");
    expect(await order("account_name")).toEqual([d1.id, d2.id]);
    expect(await order("contact_name")).toEqual([d1.id, d2.id]);
  });

  test("a user rename through assigneeRenamedInTx shows in name, email and assignee order", async () => {
    const team = await crmOrg(t, "userrename");
    const acc = await team.account("A");
    const amy = await addUser(t, team.tenant.id, "amy@userrename.test", "Amy");
    const zed = await addUser(t, team.tenant.id, "zed@userrename.test", "Zed");
    const d1 = await team.deal({ title: "1", account_id: acc.id, assigned_to: amy });
    const d2 = await team.deal({ title: "2", account_id: acc.id, assigned_to: zed });
    const order = async () => (await team.list("sort_by=assignee_name")).items.map((d: Deal) => d.id);
    expect(await order()).toEqual([d1.id, d2.id]);
    await renameUser(team.tenant.id, amy, "Zoe", "zoe@userrename.test");
    expect(await order()).toEqual([d2.id, d1.id]);
    const shown = await team.ok("GET", `/deals/${d1.id}`);
    expect([shown.assignee_name, shown.assignee_email]).toEqual(["Zoe", "zoe@userrename.test"]);
    await renameUser(team.tenant.id, zed, null, "zed@userrename.test");
    // A name removed sorts last, like no assignee.
    expect(await order()).toEqual([d1.id, d2.id]);
    expect((await team.list("sort_by=assignee_name&sort_dir=desc")).items.map((d: Deal) => d.id)).toEqual([d1.id, d2.id]);
  });
});
