import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { login } from "../auth/support";
import { testApp } from "../helpers";
import { insertUser, testSql } from "../support/sql";
import { type CrmOrg, crmOrg } from "./support";

// Bulk changes of deals (issue 32): chosen by ids or by the list's filters, stage, assignee or
// delete, each deal with its timeline entry and event, the job's audit row, members, the 422s,
// one job per organization (429), and undo (the 409s, what it puts back).

let skew = 0;
const t = testApp({ now: () => Date.now() + skew });
let org: CrmOrg;
let other: CrmOrg;
let account: { id: string };
let memberToken: string;
const MEMBER_ID = "bulk-member";

const bulk = (token: string, body: unknown) => t.json("POST", "/api/v1/crm/deals/bulk", { token, body });
const undo = (token: string, id: string) => t.json("POST", `/api/v1/crm/jobs/${id}/undo`, { token });
async function finished(token: string, id: string) {
  for (let i = 0; i < 4000; i++) {
    const j = await t.json("GET", `/api/v1/crm/jobs/${id}`, { token });
    if (j.body.status !== "running") return j.body;
    await Bun.sleep(5);
  }
  throw new Error("still running");
}
async function done(token: string, body: unknown) {
  const r = await bulk(token, body);
  if (r.status !== 202) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
  return finished(token, r.body.id);
}
async function undone(token: string, id: string) {
  const r = await undo(token, id);
  if (r.status !== 202) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
  return finished(token, r.body.id);
}
const deal = async (o: CrmOrg, id: string) => (await o.call("GET", `/deals/${id}`)).body;
/** Deals in the organization titled with `prefix`, made through the API (each with its "created" entry). */
async function deals(o: CrmOrg, prefix: string, n: number, more: (i: number) => Record<string, unknown> = () => ({})): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await o.deal({ title: `${prefix} ${i}`, account_id: account.id, ...more(i) })).id);
  return ids;
}

beforeAll(async () => {
  org = await crmOrg(t, "bulkorg");
  other = await crmOrg(t, "bulkother");
  account = await org.account("Acme");
  const hash = await t.ctx.hasher.hash("member password");
  await insertUser(t.ctx, {
    id: MEMBER_ID, tenant_id: org.tenant.id, email: "member@bulkorg.test", full_name: "Mia Member", role: "member", profile_id: null, password_hash: hash, created_at: t.ctx.now(),
  });
  memberToken = (await login(t, "member@bulkorg.test", "member password", { "x-tenant": "bulkorg" })).body.access_token as string;
});
afterAll(() => t.close());

describe("choosing and changing", () => {
  test("by ids: set stage; each deal gets its timeline entry and event naming the job; the job counts and has one audit row", async () => {
    const ids = await deals(org, "Ids", 5);
    const job = await done(org.token, { ids: [...ids.slice(0, 3), ids[0], "no-such-deal"], set: { stage: "won" } });
    expect(job).toMatchObject({ kind: "deals_bulk", status: "succeeded", total: 3, done: 3, updated: 3, unchanged: 0, bulk: { action: "change", set: { stage: "won" }, undo_of: null, undone_by: null } });
    expect(job.bulk.undo_until).toEqual(expect.any(String));
    for (const id of ids.slice(0, 3)) expect((await deal(org, id)).stage).toBe("won");
    expect((await deal(org, ids[3]!)).stage).toBe("new");
    const entries = (await org.call("GET", `/deals/${ids[0]}/activities`)).body.items;
    expect(entries[0]).toMatchObject({ type: "stage_changed", actor: { id: org.user.id }, data: { from: "new", to: "won", job_id: job.id } });
    const sql = testSql(t.ctx);
    const events = await sql.all<{ type: string; data: string }>("SELECT type, data FROM events WHERE tenant_id = ? AND type = 'deal.stage_changed'", org.tenant.id);
    const mine = events.map((e) => JSON.parse(e.data)).filter((d) => d.job_id === job.id);
    expect(mine.map((d) => d.id).sort()).toEqual(ids.slice(0, 3).sort());
    const audit = await sql.all<{ action: string; detail: string }>("SELECT action, detail FROM audit_log WHERE tenant_id = ? AND action = 'crm.deals_bulk'", org.tenant.id);
    expect(audit.map((a) => JSON.parse(a.detail)).filter((d) => d.job_id === job.id)).toEqual([expect.objectContaining({ action: "change", stage: "won", deals: 3 })]);
    // Already so: unchanged, no entry.
    expect(await done(org.token, { ids: ids.slice(0, 2), set: { stage: "won" } })).toMatchObject({ total: 2, updated: 0, unchanged: 2 });
  });

  test("by filter: exactly the deals the list shows (search, stage, assignee), counted at the start; set assignee and unassign", async () => {
    await deals(org, "Globex filter", 6, (i) => ({ stage: i % 2 ? "qualified" : "new" }));
    await deals(org, "Initech filter", 2, () => ({ stage: "qualified" }));
    const filter = { search: "GLOBEX FILTER", stage: ["qualified"] };
    const listed = await org.list("search=GLOBEX%20FILTER&stage=qualified&size=100");
    expect(listed.total).toBe(3);
    const job = await done(org.token, { filter, set: { assigned_to: MEMBER_ID } });
    expect(job).toMatchObject({ total: 3, updated: 3 });
    const mine = await org.list(`assigned_to=${MEMBER_ID}&search=filter&size=100`);
    expect(mine.items.map((d: { id: string }) => d.id).sort()).toEqual(listed.items.map((d: { id: string }) => d.id).sort());
    expect(mine.items[0]).toMatchObject({ assigned_to: MEMBER_ID, assignee_name: "Mia Member" });
    // mine=true is the caller's own deals; unassign them.
    const back = await done(memberToken, { filter: { mine: true }, set: { assigned_to: null } });
    expect(back).toMatchObject({ total: 3, updated: 3 });
    expect((await org.list(`assigned_to=${MEMBER_ID}`)).total).toBe(0);
    // The search index follows: unassigned again, and one assignee for another (its text left as it was).
    expect((await org.list("search=globex%20filter&unassigned=true")).total).toBe(6);
    await done(org.token, { filter: { search: "globex filter" }, set: { assigned_to: MEMBER_ID } });
    await done(org.token, { filter: { search: "globex filter" }, set: { assigned_to: org.user.id } });
    expect((await org.list(`search=globex%20filter&assigned_to=${org.user.id}`)).total).toBe(6);
    expect((await org.list("search=globex%20filter&unassigned=true")).total).toBe(0);
    expect((await org.list(`search=glo&assigned_to=${MEMBER_ID}`)).total).toBe(0);
    // A stage the organization lacks matches nothing, as in the list.
    expect(await done(org.token, { filter: { stage: ["nope"] }, set: { stage: "won" } })).toMatchObject({ total: 0, updated: 0 });
  });

  test("delete: the deals are gone with their events; a member may, as with single deals", async () => {
    const ids = await deals(org, "Doomed", 4);
    const job = await done(memberToken, { ids, delete: true });
    expect(job).toMatchObject({ status: "succeeded", total: 4, updated: 4, bulk: { action: "delete", set: null } });
    for (const id of ids) expect((await org.call("GET", `/deals/${id}`)).status).toBe(404);
    const gone = await testSql(t.ctx).all<{ data: string }>("SELECT data FROM events WHERE tenant_id = ? AND type = 'deal.deleted'", org.tenant.id);
    expect(gone.map((e) => JSON.parse(e.data)).filter((d) => d.job_id === job.id)).toHaveLength(4);
  });

  test("another organization's deals are never touched, by ids or by filter", async () => {
    const theirs = (await other.deal({ title: "Theirs", account_id: (await other.account("Other Co")).id })).id;
    expect(await done(org.token, { ids: [theirs], set: { stage: "lost" } })).toMatchObject({ total: 0, updated: 0 });
    expect(await done(org.token, { filter: { search: "theirs" }, delete: true })).toMatchObject({ total: 0 });
    expect((await deal(other, theirs)).stage).toBe("new");
    // Nor its jobs: another organization's job is 404, its undo too.
    const job = await done(org.token, { ids: [theirs], set: { stage: "lost" } });
    expect((await t.json("GET", `/api/v1/crm/jobs/${job.id}`, { token: other.token })).status).toBe(404);
    expect((await undo(other.token, job.id)).status).toBe(404);
  });
});

describe("refusals", () => {
  test("422: both or neither of ids and filter, of set and delete; an empty set; over 1,000 ids; the list's own filter checks; an unknown stage or member", async () => {
    const cases: Array<[unknown, unknown[]]> = [
      [{ set: { stage: "won" } }, ["body", "ids"]],
      [{ ids: ["a"], filter: {}, set: { stage: "won" } }, ["body", "ids"]],
      [{ ids: ["a"] }, ["body", "set"]],
      [{ ids: ["a"], set: { stage: "won" }, delete: true }, ["body", "set"]],
      [{ ids: ["a"], set: {} }, ["body", "set"]],
      [{ ids: ["a"], delete: false }, ["body", "delete"]],
      [{ ids: Array.from({ length: 1001 }, (_, i) => `d${i}`), delete: true }, ["body", "ids"]],
      [{ filter: { assigned_to: MEMBER_ID, mine: true }, delete: true }, ["body", "filter", "mine"]],
      [{ filter: { colour: "red" }, delete: true }, ["body", "filter", "colour"]],
      [{ ids: ["a"], set: { stgae: "won" } }, ["body", "set", "stgae"]],
      [{ ids: ["a"], delete: true, all: true }, ["body", "all"]],
      [{ ids: ["a"], set: { stage: "nope" } }, ["body", "set", "stage"]],
      [{ ids: ["a"], set: { assigned_to: "nobody-here" } }, ["body", "set", "assigned_to"]],
    ];
    for (const [body, loc] of cases) {
      const r = await bulk(org.token, body);
      expect({ body, status: r.status }).toEqual({ body, status: 422 });
      expect(r.body.detail.map((d: { loc: unknown[] }) => d.loc)).toContainEqual(loc);
    }
    // Another organization's member is no member here.
    expect((await bulk(org.token, { ids: ["a"], set: { assigned_to: other.user.id } })).status).toBe(422);
    expect((await t.json("POST", "/api/v1/crm/deals/bulk", { body: { ids: ["a"], delete: true } })).status).toBe(401);
  });

  test("429 while the organization has a job running; another organization is not held", async () => {
    const ids = await deals(org, "Busy", 30);
    const first = await bulk(org.token, { filter: {}, set: { stage: "proposal" } });
    expect(first.status).toBe(202);
    const second = await bulk(org.token, { ids, set: { stage: "new" } });
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ code: "too_many_jobs" });
    expect(second.headers.get("retry-after")).toBe("10");
    expect((await bulk(other.token, { filter: {}, set: { stage: "won" } })).status).toBe(202);
    expect(await finished(org.token, first.body.id)).toMatchObject({ status: "succeeded" });
    await finished(other.token, (await t.json("GET", "/api/v1/crm/jobs", { token: other.token })).body.items[0].id);
    // An undo is a job too: refused while another runs.
    const again = await bulk(org.token, { ids: ids.slice(0, 25), set: { stage: "won" } });
    expect((await undo(org.token, first.body.id)).status).toBe(409);
    await finished(org.token, again.body.id);
  });
});

describe("undo", () => {
  test("puts back each deal's stage and assignee as before (a value changed since stays), with timeline entries; counts say what it did", async () => {
    const ids = await deals(org, "Undo set", 4, (i) => ({ stage: i % 2 ? "qualified" : "new", assigned_to: i === 0 ? MEMBER_ID : null }));
    const before = await Promise.all(ids.map((id) => deal(org, id)));
    const job = await done(org.token, { ids, set: { stage: "won", assigned_to: org.user.id } });
    expect(job.updated).toBe(4);
    // Someone moves deal 3 on after the bulk change: undo leaves its stage (its assignee still goes back).
    expect((await org.call("PATCH", `/deals/${ids[3]}`, { stage: "lost" })).status).toBe(200);
    const u = await undone(org.token, job.id);
    expect(u).toMatchObject({ kind: "deals_bulk_undo", status: "succeeded", total: 4, done: 4, updated: 4, added: 0, unchanged: 0, bulk: { action: "undo", undo_of: job.id, undo_until: null } });
    for (let i = 0; i < 3; i++) {
      const d = await deal(org, ids[i]!);
      expect({ stage: d.stage, assigned_to: d.assigned_to, stage_changed_at: d.stage_changed_at }).toEqual({ stage: before[i].stage, assigned_to: before[i].assigned_to, stage_changed_at: before[i].stage_changed_at });
    }
    expect(await deal(org, ids[3]!)).toMatchObject({ stage: "lost", assigned_to: null });
    const [latest] = (await org.call("GET", `/deals/${ids[0]}/activities`)).body.items;
    expect(latest.data).toMatchObject({ job_id: u.id, undo_of: job.id });
    expect((await t.json("GET", `/api/v1/crm/jobs/${job.id}`, { token: org.token })).body.bulk).toMatchObject({ undone_by: u.id, undo_until: null });
    const again = await undo(org.token, job.id);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: "already_undone", detail: expect.stringMatching(/already been undone/) });
  });

  test("brings deleted deals back with their timeline and notes", async () => {
    const [id] = await deals(org, "Undo delete", 1);
    const note = await org.ok("POST", `/deals/${id}/notes`, { body: "Keep me" });
    const entriesBefore = (await org.call("GET", `/deals/${id}/activities`)).body.items;
    const kept = await deal(org, id!);
    const job = await done(org.token, { ids: [id], delete: true });
    expect((await org.call("GET", `/deals/${id}`)).status).toBe(404);
    const u = await undone(org.token, job.id);
    expect(u).toMatchObject({ status: "succeeded", added: 1, updated: 0 });
    expect(await deal(org, id!)).toEqual(kept);
    const entries = (await org.call("GET", `/deals/${id}/activities`)).body.items;
    expect(entries[0]).toMatchObject({ type: "restored", data: { job_id: u.id, undo_of: job.id } });
    expect(entries.slice(1)).toEqual(entriesBefore);
    expect(entries.find((e: { id: string }) => e.id === note.id).data.note.body).toBe("Keep me");
    expect((await org.list("search=undo%20delete")).total).toBe(1);
  });

  test("409s: not the caller's last bulk change, still running, failed, too late; 403 for another member; 404 for an import or unknown id", async () => {
    const ids = await deals(org, "Undo refusals", 2);
    const older = await done(org.token, { ids, set: { stage: "qualified" } });
    const newer = await done(org.token, { ids, set: { stage: "proposal" } });
    const notLast = await undo(org.token, older.id);
    expect(notLast.status).toBe(409);
    expect(notLast.body).toMatchObject({ code: "not_last_bulk_change" });
    expect((await undo(memberToken, newer.id)).status).toBe(403);
    expect((await undo(org.token, "no-such-job")).status).toBe(404);
    // A member's own last change is theirs to undo, not blocked by the admin's.
    const membersJob = await done(memberToken, { ids, set: { stage: "won" } });
    skew = 11 * 60_000;
    try {
      const late = await undo(memberToken, membersJob.id);
      expect(late.status).toBe(409);
      expect(late.body).toMatchObject({ code: "undo_expired", detail: expect.stringMatching(/10 minutes/) });
      expect((await t.json("GET", `/api/v1/crm/jobs/${membersJob.id}`, { token: memberToken })).body.bulk.undo_until).toBe(new Date(Date.parse(membersJob.finished_at) + 600_000).toISOString());
    } finally {
      skew = 0;
    }
    expect((await undo(org.token, newer.id)).status).toBe(202);
    await finished(org.token, (await t.json("GET", "/api/v1/crm/jobs", { token: org.token })).body.items[0].id);
    expect((await deal(org, ids[0]!)).stage).toBe("won");
  });
});
