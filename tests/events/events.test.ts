import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testApp } from "../helpers";
import { type CrmOrg, crmOrg } from "../crm/support";
import { addMember, login, sessionIdOf } from "../auth/support";
import { testSql } from "../support/sql";
import { EVENTS, STREAM, openStream, sseReader } from "./support";
import { PASSWORD, accept, invited } from "../team/support";

const t = testApp({ eventsHeartbeatMs: 200 });
let org: CrmOrg;
let other: CrmOrg;

beforeAll(async () => {
  org = await crmOrg(t, "evorg");
  other = await crmOrg(t, "evother");
});
afterAll(() => t.close());

const list = async (token: string, query = "") => {
  const r = await t.json("GET", `${EVENTS}${query}`, { token });
  expect(r.status).toBe(200);
  return r.body as { items: Array<{ id: string; type: string; organization_id: string; actor: { type: string; id: string | null }; data: Record<string, any> }>; next_after: string | null };
};

describe("the event log", () => {
  test("deal writes each log one event, newest first, with the actor and the changed fields before and after", async () => {
    const before = (await list(org.token)).items[0]?.id ?? "0";
    const account = await org.account("Evented");
    const deal = await org.deal({ title: "First", account_id: account.id, value: 100 });
    await org.ok("PATCH", `/deals/${deal.id}`, { title: "Renamed" });
    await org.ok("PATCH", `/deals/${deal.id}`, { stage: "won" });
    await org.ok("PATCH", `/deals/${deal.id}`, { title: "Renamed" }); // no change: no event
    await org.ok("DELETE", `/deals/${deal.id}`, undefined, 204);

    const { items } = await list(org.token, `?since=${before}`);
    expect(items.map((e) => e.type)).toEqual(["deal.deleted", "deal.stage_changed", "deal.updated", "deal.created", "account.created"]);
    const ids = items.map((e) => e.id);
    expect([...ids].sort().reverse()).toEqual(ids);
    expect(ids.map(Number)).toEqual([...ids.map(Number)].sort((a, b) => b - a));
    for (const e of items) {
      expect(e.organization_id).toBe(org.tenant.id);
      expect(e.actor).toEqual({ type: "user", id: org.user.id });
    }
    expect(items[2]!.data).toEqual({ id: deal.id, changes: { title: { before: "First", after: "Renamed" } } });
    expect(items[1]!.data).toMatchObject({ id: deal.id, from: "new", to: "won", changes: { stage: { before: "new", after: "won" } } });
    expect(items[3]!.data).toMatchObject({ id: deal.id, title: "First", account_id: account.id, value_cents: 10000, stage: "new" });
    expect(items[0]!.data).toEqual({ id: deal.id, title: "Renamed" });
  });

  test("accounts, contacts and stages log theirs", async () => {
    const before = (await list(org.token)).items[0]!.id;
    const a = await org.account("Acc");
    await org.ok("PATCH", `/accounts/${a.id}`, { name: "Acc 2" });
    const c = await org.contact("Ann", "Lee", { account_id: a.id });
    await org.ok("PATCH", `/contacts/${c.id}`, { email: "ann@x.test" });
    await org.ok("DELETE", `/contacts/${c.id}`, undefined, 204);
    await org.ok("DELETE", `/accounts/${a.id}`, undefined, 204);
    const stage = await org.ok("POST", "/pipeline-stages", { key: "evstage", name: "Ev" });
    await org.ok("PATCH", `/pipeline-stages/${stage.id}`, { name: "Ev 2" });
    await org.ok("DELETE", `/pipeline-stages/${stage.id}`, undefined, 204);
    const { items } = await list(org.token, `?since=${before}`);
    expect(items.map((e) => e.type).reverse()).toEqual([
      "account.created", "account.updated", "contact.created", "contact.updated", "contact.deleted", "account.deleted",
      "pipeline_stage.created", "pipeline_stage.updated", "pipeline_stage.deleted",
    ]);
    expect(items.find((e) => e.type === "account.updated")!.data).toEqual({ id: a.id, changes: { name: { before: "Acc", after: "Acc 2" } } });
    expect(items.find((e) => e.type === "contact.updated")!.data).toEqual({ id: c.id, changes: { email: { before: null, after: "ann@x.test" } } });
  });

  test("pages go from newest to oldest with next_after, and stop at since", async () => {
    const all = (await list(org.token, "?limit=100")).items;
    const first = await list(org.token, "?limit=3");
    expect(first.items.map((e) => e.id)).toEqual(all.slice(0, 3).map((e) => e.id));
    const second = await list(org.token, `?limit=3&after=${first.next_after}`);
    expect(second.items.map((e) => e.id)).toEqual(all.slice(3, 6).map((e) => e.id));
    const bounded = await list(org.token, `?since=${all[2]!.id}`);
    expect(bounded.items.map((e) => e.id)).toEqual(all.slice(0, 2).map((e) => e.id));
    expect(bounded.next_after).toBeNull();
    const bad = await t.json("GET", `${EVENTS}?after=abc`, { token: org.token });
    expect(bad.status).toBe(422);
  });

  test("an import writes one event per record it adds or changes, then import.finished", async () => {
    const before = (await list(org.token)).items[0]!.id;
    const existing = await org.account("Imported Old", { domain: "old.test" });
    const csv = `id,name,domain\n,Imported One,one.test\n,Imported Two,\n${existing.id},Imported Old,new.test\n`;
    const r = await t.app.handle(
      new Request("http://localhost/api/v1/crm/accounts/import", { method: "POST", headers: { authorization: `Bearer ${org.token}`, "content-type": "text/csv" }, body: csv }),
    );
    expect(r.status).toBe(202);
    const jobId = ((await r.json()) as { id: string }).id;
    let finished: Awaited<ReturnType<typeof list>>["items"][number] | undefined;
    for (let i = 0; i < 2000 && !finished; i++) {
      finished = (await list(org.token, "?limit=5")).items.find((e) => e.type === "import.finished");
      if (!finished) await Bun.sleep(5);
    }
    const { items } = await list(org.token, `?since=${before}`);
    expect(items.map((e) => e.type).reverse()).toEqual(["account.created", "account.created", "account.created", "account.updated", "import.finished"]);
    expect(items[0]!.data).toMatchObject({ job_id: jobId, kind: "accounts", status: "succeeded", added: 2, updated: 1, error_count: 0 });
    expect(items[1]!.data).toEqual({ id: existing.id, changes: { domain: { before: "old.test", after: "new.test" } }, job_id: jobId });
    expect(items[2]!.data).toMatchObject({ name: "Imported Two", job_id: jobId });
    for (const e of items) expect(e.actor).toEqual({ type: "user", id: org.user.id });
  });

  test("a change rolled back after its event was written leaves neither the change nor the event", async () => {
    const account = await org.account("Rollback");
    const before = await list(org.token);
    const sql = testSql(t.ctx);
    if (t.ctx.pg) {
      // Fails at COMMIT, after every statement of the write (the event's insert included) has run.
      await sql.run(`CREATE FUNCTION fail_event() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'forced failure'; END $$`);
      await sql.run(`CREATE CONSTRAINT TRIGGER fail_event AFTER INSERT ON events DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fail_event()`);
    }
    const events = t.ctx.repos.events as unknown as { appendInTx?: (...a: unknown[]) => void };
    const append = events.appendInTx;
    if (append)
      events.appendInTx = (...a: unknown[]) => {
        append(...a);
        throw new Error("forced failure");
      };
    try {
      const r = await org.call("POST", "/deals", { title: "Never", account_id: account.id });
      expect(r.status).toBe(500);
    } finally {
      if (append) events.appendInTx = append;
      if (t.ctx.pg) await sql.run("DROP TRIGGER fail_event ON events");
    }
    expect(await sql.get("SELECT id FROM deals WHERE tenant_id = ?1 AND title = 'Never'", org.tenant.id)).toBeNull();
    expect((await list(org.token)).items).toEqual(before.items);
    // The log goes on from where it was: no number was used up.
    await org.deal({ title: "After", account_id: account.id });
    const after = await list(org.token, "?limit=1");
    expect(Number(after.items[0]!.id)).toBe(Number(before.items[0]!.id) + 1);
  });

  test("an organization never sees another's events", async () => {
    await other.account("Theirs");
    const mine = await list(org.token, "?limit=100");
    expect(mine.items.every((e) => e.organization_id === org.tenant.id)).toBe(true);
    expect(mine.items.some((e) => e.data.name === "Theirs")).toBe(false);
    const theirs = await list(other.token, "?limit=100");
    expect(theirs.items.map((e) => e.organization_id)).toEqual(theirs.items.map(() => other.tenant.id));
  });

  test("old events are swept after the retention, in steps", async () => {
    const sql = testSql(t.ctx);
    const n = (await list(other.token, "?limit=100")).items.length;
    expect(n).toBeGreaterThan(0);
    await sql.run("UPDATE events SET created_at = 1000 WHERE tenant_id = ?1", other.tenant.id);
    expect(await t.ctx.events.sweep(t.ctx.now())).toBe(n);
    expect((await list(other.token)).items).toEqual([]);
    expect((await list(org.token)).items.length).toBeGreaterThan(0);
  });
});

describe("the team's events", () => {
  test("invitations and members log theirs, with no token or link in them", async () => {
    const admin = await t.signup("evteam");
    const sent = await invited(t, admin, "joiner@evteam.test");
    const joined = await accept(t, { token: sent.token, password: PASSWORD });
    expect(joined.status).toBe(201);
    const userId = joined.body.user.id as string;
    const revokeMe = await invited(t, admin, "never@evteam.test");
    expect((await t.json("POST", `/api/v1/users/invitations/${revokeMe.invitation.id}/revoke`, { token: admin.access_token })).status).toBe(200);
    expect((await t.json("PATCH", `/api/v1/users/${userId}`, { token: admin.access_token, body: { role: "admin", full_name: "Joy" } })).status).toBe(200);
    expect((await t.request("DELETE", `/api/v1/users/${userId}`, { token: admin.access_token })).status).toBe(204);
    const { items } = await list(admin.access_token, "?limit=100");
    const types = items.map((e) => e.type).reverse();
    expect(types.filter((x) => !x.startsWith("pipeline_stage."))).toEqual([
      "invitation.created", "invitation.accepted", "member.joined", "invitation.created", "invitation.revoked", "member.role_changed", "member.updated", "member.removed",
    ]);
    const byType = (type: string) => items.find((e) => e.type === type)!;
    expect(byType("invitation.accepted").actor).toEqual({ type: "user", id: userId });
    expect(byType("member.joined").data).toMatchObject({ id: userId, email: "joiner@evteam.test", role: "member" });
    expect(byType("member.role_changed")).toMatchObject({ actor: { type: "user", id: admin.user.id }, data: { id: userId, changes: { role: { before: "member", after: "admin" } } } });
    expect(byType("member.removed").data).toMatchObject({ id: userId, email: "joiner@evteam.test", deals_moved: 0 });
    const text = JSON.stringify(items);
    for (const secret of [sent.token, revokeMe.token, encodeURIComponent(sent.token)]) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/token|password|https?:\/\//i);
  });
});

describe("the live stream", () => {
  test("401 with WWW-Authenticate: Bearer without a session", async () => {
    const r = await t.request("GET", STREAM);
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toBe("Bearer");
    const bad = await t.request("GET", STREAM, { token: "not-a-token" });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toBe("Bearer");
  });

  test("sends the organization's new events, never another's, with heartbeats", async () => {
    const res = await openStream(t, org.token);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    const s = sseReader(res);
    try {
      await other.account("Not for you");
      const a = await org.account("Live");
      const [e] = await s.take(1);
      expect(e!.event).toBe("account.created");
      expect(e!.data).toMatchObject({ type: "account.created", organization_id: org.tenant.id, data: { id: a.id, name: "Live" } });
      expect(e!.id).toBe(e!.data.id);
      expect(await s.until(() => s.comments.includes("heartbeat"), 2000)).toBe(true);
      expect(s.events.length).toBe(1);
    } finally {
      await s.cancel();
    }
  });

  test("Last-Event-ID resumes from the log", async () => {
    const start = (await list(org.token)).items[0]!.id;
    await org.account("Missed 1");
    await org.account("Missed 2");
    const s = sseReader(await openStream(t, org.token, start));
    try {
      const got = await s.take(2);
      expect(got.map((e) => e.data.data.name)).toEqual(["Missed 1", "Missed 2"]);
      await org.account("Live 3");
      expect((await s.take(3))[2]!.data.data.name).toBe("Live 3");
      const q = sseReader(await t.request("GET", `${STREAM}?last_event_id=${got[0]!.id}`, { token: org.token }));
      expect((await q.take(2)).map((e) => e.data.data.name)).toEqual(["Missed 2", "Live 3"]);
      await q.cancel();
    } finally {
      await s.cancel();
    }
    // A number past the log's end resumes from its end: the next event still comes, to this stream and to others.
    const far = sseReader(await openStream(t, org.token, "999999999"));
    const near = sseReader(await openStream(t, org.token));
    try {
      await far.until(() => far.comments.includes("connected"));
      await near.until(() => near.comments.includes("connected"));
      await Bun.sleep(50);
      await org.account("After far");
      expect((await far.take(1))[0]!.data.data.name).toBe("After far");
      expect((await near.take(1))[0]!.data.data.name).toBe("After far");
    } finally {
      await far.cancel();
      await near.cancel();
    }
    const bad = await t.request("GET", STREAM, { token: org.token, headers: { "last-event-id": "nope" } });
    expect(bad.status).toBe(422);
  });

  test("a revoked session's stream ends at the next event, or at the next heartbeat", async () => {
    const m = await addMember(t, org.tenant.id, "streamer@evorg.test", "streamer password");
    const signedIn = await login(t, m.email, m.password, { host: "evorg.localhost" });
    expect(signedIn.status).toBe(200);
    const token = signedIn.body.access_token as string;
    const s = sseReader(await openStream(t, token));
    await org.account("Seen");
    await s.take(1);
    const revoke = await t.json("POST", "/api/v1/auth/sessions/revoke", { token, body: { session_id: await sessionIdOf(t, token) } });
    expect(revoke.status).toBe(200);
    await org.account("Not seen");
    expect(await s.until(() => s.ended, 2000)).toBe(true);
    expect(s.events.map((e) => e.data.data.name)).toEqual(["Seen"]);

    // With no event at all, the heartbeat's check ends it.
    const again = await login(t, m.email, m.password, { host: "evorg.localhost" });
    const quiet = sseReader(await openStream(t, again.body.access_token));
    await quiet.until(() => quiet.comments.includes("connected"));
    await t.json("POST", "/api/v1/auth/sessions/revoke", { token: again.body.access_token, body: { session_id: await sessionIdOf(t, again.body.access_token) } });
    expect(await quiet.until(() => quiet.ended, 2000)).toBe(true);
  });

  test("members see the CRM's events, not the team's", async () => {
    const m = await addMember(t, org.tenant.id, "plain@evorg.test", "plain password");
    const token = (await login(t, m.email, m.password, { host: "evorg.localhost" })).body.access_token as string;
    const s = sseReader(await openStream(t, token));
    try {
      const invite = await t.json("POST", "/api/v1/users/invite", { token: org.token, body: { email: "new@evorg.test" } });
      expect(invite.status).toBe(201);
      await org.account("After invite");
      const [e] = await s.take(1);
      expect(e!.event).toBe("account.created");
      const adminView = await list(org.token, "?limit=2");
      expect(adminView.items.map((x) => x.type)).toEqual(["account.created", "invitation.created"]);
      const memberView = await list(token, "?limit=2");
      expect(memberView.items.map((x) => x.type)).not.toContain("invitation.created");
    } finally {
      await s.cancel();
    }
  });
});
