import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { type TestApp, browserHeaders, setCookies, testApp } from "../helpers";
import { ME, SESSIONS, addMember, claimsOf, clockedApp, denial, forge, login, sessionIdOf, sessionOf } from "./support";
import { testSql } from "../support/sql";

type Org = Awaited<ReturnType<TestApp["signup"]>>;

let t: TestApp;
let clock: ReturnType<typeof clockedApp>["clock"];
let org: Org;
const apps: TestApp[] = [];
afterAll(() => apps.forEach((a) => a.close()));

beforeEach(async () => {
  ({ t, clock } = clockedApp());
  apps.push(t);
  org = await t.signup("acme");
});

/** Signs the admin in again, a second later than the previous sign-in. */
async function signIn(ua = "test-agent") {
  clock.advance(1000);
  const r = await login(t, org.email, org.password, { "user-agent": ua });
  expect(r.status).toBe(200);
  return { ...r.body, sid: (await sessionIdOf(t, r.body.access_token)), res: r.res } as {
    access_token: string;
    refresh_token: string;
    sid: string;
    res: Response;
  };
}
const list = (token: string) => t.json("GET", SESSIONS, { token });
const revoke = (token: string, session_id: string) => t.json("POST", `${SESSIONS}/revoke`, { token, body: { session_id } });

describe("GET /auth/sessions", () => {
  test("lists live sessions newest first, exact fields, exactly one current", async () => {
    const a = await signIn("agent-a");
    const b = await signIn("agent-b");
    const r = await list(a.access_token);
    expect(r.status).toBe(200);
    expect(Array.isArray(r.body)).toBe(true);
    expect(r.body.map((s: { id: string }) => s.id)).toEqual([b.sid, a.sid, (await sessionIdOf(t, org.access_token))]);
    for (const s of r.body) {
      expect(Object.keys(s).sort()).toEqual(["created_at", "current", "expires_at", "id", "ip", "last_used_at", "method", "user_agent"]);
      for (const k of ["created_at", "last_used_at", "expires_at"]) expect(s[k]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      expect(Date.parse(s.expires_at) - Date.parse(s.created_at)).toBe(30 * 86400_000);
    }
    expect(r.body.filter((s: { current: boolean }) => s.current)).toHaveLength(1);
    expect(r.body[1]).toMatchObject({ id: a.sid, current: true, user_agent: "agent-a", method: "password" });
    expect(r.body[0]).toMatchObject({ id: b.sid, current: false, user_agent: "agent-b" });
    // From b's point of view, b is the current one.
    const fromB = await list(b.access_token);
    expect(fromB.body.filter((s: { current: boolean }) => s.current).map((s: { id: string }) => s.id)).toEqual([b.sid]);
  });

  test("lists only the caller's own sessions, not another user's or another tenant's", async () => {
    const member = await addMember(t, org.tenant.id, "member@acme.test", "member password 1");
    const m = await login(t, member.email, member.password);
    const other = await t.signup("other");
    const mine = (await list(org.access_token)).body.map((s: { id: string }) => s.id);
    expect(mine).toEqual([(await sessionIdOf(t, org.access_token))]);
    expect(mine).not.toContain((await sessionIdOf(t, m.body.access_token)));
    expect(mine).not.toContain((await sessionIdOf(t, other.access_token)));
  });

  test("revoked and expired sessions are not listed", async () => {
    const a = await signIn();
    const b = await signIn();
    expect((await revoke(a.access_token, b.sid)).status).toBe(200);
    const ids = (await list(a.access_token)).body.map((s: { id: string }) => s.id);
    expect(ids).not.toContain(b.sid);
    expect(ids).toContain(a.sid);
  });

  test("sessions past their absolute end are not listed", async () => {
    const signupSid = await sessionIdOf(t, org.access_token);
    const a = await signIn();
    // The signup session (1 s older) has ended; a's has 0.5 s to go.
    clock.advance(30 * 86400_000 - 500);
    const fresh = await t.json("POST", "/api/v1/auth/refresh", { body: { refresh_token: a.refresh_token } });
    expect(fresh.status).toBe(200);
    const ids = (await list(fresh.body.access_token)).body.map((s: { id: string }) => s.id);
    expect(ids).toEqual([a.sid]);
    expect(ids).not.toContain(signupSid);
    // ...and, being gone, cannot be revoked either.
    const r = await revoke(fresh.body.access_token, String(signupSid));
    expect(r.status).toBe(404);
    expect(r.body.code).toBe("not_found");
  });

  test("last_used_at moves on with use", async () => {
    const a = await signIn();
    const before = (await list(a.access_token)).body.find((s: { id: string }) => s.id === a.sid).last_used_at;
    clock.advance(5 * 60_000);
    const after = (await list(a.access_token)).body.find((s: { id: string }) => s.id === a.sid).last_used_at;
    expect(Date.parse(after)).toBeGreaterThan(Date.parse(before));
  });
});

describe("POST /auth/sessions/revoke", () => {
  test("ends the named session; its access token is refused on the very next request", async () => {
    const a = await signIn();
    const b = await signIn();
    expect((await t.json("GET", ME, { token: b.access_token })).status).toBe(200);
    const r = await revoke(a.access_token, b.sid);
    expect(r.status).toBe(200);
    expect(r.body.revoked).toBe(1);
    // Not at its expiry: now.
    expect(denial(await t.json("GET", ME, { token: b.access_token }))).toEqual({ status: 401, code: "session_revoked", www: "Bearer" });
    expect(denial(await t.json("GET", ME, { cookies: { svc_session: b.access_token } }))).toEqual({
      status: 401,
      code: "session_revoked",
      www: "Bearer",
    });
    // Its refresh token is dead too.
    const refreshed = await t.json("POST", "/api/v1/auth/refresh", { body: { refresh_token: b.refresh_token } });
    expect(denial(refreshed)).toEqual({ status: 401, code: "session_revoked", www: "Bearer" });
    // The caller's own session is untouched.
    expect((await t.json("GET", ME, { token: a.access_token })).status).toBe(200);
  });

  test("revoking twice, or an unknown id: 404", async () => {
    const a = await signIn();
    const b = await signIn();
    expect((await revoke(a.access_token, b.sid)).status).toBe(200);
    const again = await revoke(a.access_token, b.sid);
    expect(again.status).toBe(404);
    expect(again.body.code).toBe("not_found");
    const unknown = await revoke(a.access_token, "no-such-session");
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("not_found");
  });

  test("another user's session, same tenant: 404 and it stays alive", async () => {
    const member = await addMember(t, org.tenant.id, "member@acme.test", "member password 1");
    const m = await login(t, member.email, member.password);
    const r = await revoke(org.access_token, (await sessionIdOf(t, m.body.access_token)));
    expect(r.status).toBe(404);
    expect(r.body.code).toBe("not_found");
    expect((await t.json("GET", ME, { token: m.body.access_token })).status).toBe(200);
  });

  test("another tenant's session: 404 and it stays alive", async () => {
    const other = await t.signup("other");
    const r = await revoke(org.access_token, (await sessionIdOf(t, other.access_token)));
    expect(r.status).toBe(404);
    expect((await t.json("GET", ME, { token: other.access_token })).status).toBe(200);
    // And the other way round.
    expect((await revoke(other.access_token, (await sessionIdOf(t, org.access_token)))).status).toBe(404);
    expect((await t.json("GET", ME, { token: org.access_token })).status).toBe(200);
  });

  test("a body without session_id is a 422", async () => {
    const r = await t.json("POST", `${SESSIONS}/revoke`, { token: org.access_token, body: {} });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].loc).toEqual(["body", "session_id"]);
  });
});

describe("revoke-others, logout, logout-all", () => {
  test("revoke-others leaves only the current session", async () => {
    const a = await signIn();
    const b = await signIn();
    const r = await t.json("POST", `${SESSIONS}/revoke-others`, { token: a.access_token });
    expect(r.status).toBe(200);
    expect(r.body.revoked).toBe(2);
    const left = (await list(a.access_token)).body;
    expect(left.map((s: { id: string }) => s.id)).toEqual([a.sid]);
    expect(left[0].current).toBe(true);
    expect((await t.json("GET", ME, { token: b.access_token })).body.code).toBe("session_revoked");
    expect((await t.json("GET", ME, { token: org.access_token })).body.code).toBe("session_revoked");
  });

  test("revoke-others does not touch another user's sessions", async () => {
    const member = await addMember(t, org.tenant.id, "member@acme.test", "member password 1");
    const m = await login(t, member.email, member.password);
    expect((await t.json("POST", `${SESSIONS}/revoke-others`, { token: org.access_token })).status).toBe(200);
    expect((await t.json("GET", ME, { token: m.body.access_token })).status).toBe(200);
  });

  test("logout-all revokes every session including the current and clears both cookies", async () => {
    const a = await signIn();
    const b = await signIn();
    const r = await t.json("POST", "/api/v1/auth/logout-all", { token: a.access_token });
    expect(r.status).toBe(200);
    expect(r.body.revoked).toBe(3);
    for (const tok of [a.access_token, b.access_token, org.access_token]) {
      expect(denial(await t.json("GET", ME, { token: tok }))).toEqual({ status: 401, code: "session_revoked", www: "Bearer" });
    }
    const c = setCookies(r.res);
    expect(c.svc_session).toMatchObject({ value: "", attrs: { "max-age": "0", path: "/" } });
    expect(c.svc_refresh).toMatchObject({ value: "", attrs: { "max-age": "0", path: "/api/v1/auth" } });
    // Cleared with the attributes that set them, or a browser would keep the originals.
    const set = setCookies(a.res);
    for (const name of ["svc_session", "svc_refresh"]) {
      expect(c[name]!.attrs.domain).toBe(set[name]!.attrs.domain);
      expect(c[name]!.attrs.samesite).toBe(set[name]!.attrs.samesite);
      expect(c[name]!.attrs.httponly).toBe(true);
    }
  });

  test("logout ends only the current session and clears the cookies", async () => {
    const a = await signIn();
    const b = await signIn();
    const r = await t.json("POST", "/api/v1/auth/logout", { token: a.access_token });
    expect(r.status).toBe(200);
    expect(r.body.revoked).toBe(1);
    expect((await t.json("GET", ME, { token: a.access_token })).body.code).toBe("session_revoked");
    expect((await t.json("GET", ME, { token: b.access_token })).status).toBe(200);
    expect((await t.json("GET", ME, { token: org.access_token })).status).toBe(200);
    const c = setCookies(r.res);
    expect(c.svc_session?.attrs["max-age"]).toBe("0");
    expect(c.svc_refresh?.attrs["max-age"]).toBe("0");
    expect(c.svc_refresh?.attrs.path).toBe("/api/v1/auth");
  });

  test("revoking one's own current session by id clears the cookies", async () => {
    const a = await signIn();
    const r = await revoke(a.access_token, a.sid);
    expect(r.status).toBe(200);
    expect(setCookies(r.res).svc_session?.attrs["max-age"]).toBe("0");
    expect((await t.json("GET", ME, { token: a.access_token })).body.code).toBe("session_revoked");
  });

  test("a cookie-authenticated logout needs the CSRF headers", async () => {
    const a = await signIn();
    const cookies = { svc_session: a.access_token };
    const bare = await t.json("POST", "/api/v1/auth/logout", { cookies });
    expect(bare.status).toBe(403);
    expect(bare.body.code).toBe("csrf_failed");
    const cross = await t.json("POST", "/api/v1/auth/logout", { cookies, headers: browserHeaders("https://evil.example") });
    expect(cross.status).toBe(403);
    expect((await t.json("GET", ME, { token: a.access_token })).status).toBe(200);
    const ok = await t.json("POST", "/api/v1/auth/logout", { cookies, headers: browserHeaders(), raw: "{}" });
    expect(ok.status).toBe(200);
    expect((await t.json("GET", ME, { token: a.access_token })).body.code).toBe("session_revoked");
  });
});

describe("clearing cookies on a real domain", () => {
  test("logout-all clears with Domain and Secure, as they were set", async () => {
    const d = testApp({ env: { SUITE_BASE_DOMAIN: "example.com" } });
    apps.push(d);
    const o = await d.signup("acme");
    const r = await d.json("POST", "/api/v1/auth/logout-all", { token: o.access_token });
    expect(r.status).toBe(200);
    const c = setCookies(r.res);
    for (const name of ["svc_session", "svc_refresh"]) {
      expect(c[name]).toMatchObject({ value: "", attrs: { "max-age": "0", domain: "example.com", secure: true, httponly: true } });
    }
    expect(c.svc_refresh!.attrs.path).toBe("/api/v1/auth");
  });
});

describe("session ids in the database (issue 13, 2d)", () => {
  test("the secret sid the tokens carry is stored only as its SHA-256; the list shows a separate public id", async () => {
    const a = await signIn();
    const sid = claimsOf(a.access_token).sid as string;
    const row = (await sessionOf(t, a.access_token))!;
    expect(row.id).not.toBe(sid);
    expect(row.sid_hash).toBe(new Bun.CryptoHasher("sha256").update(sid).digest("hex"));
    // No column of any session row, and no audit row, holds the secret sid.
    const dump = JSON.stringify([(await testSql(t.ctx).all("SELECT * FROM sessions")), (await testSql(t.ctx).all("SELECT * FROM audit_log"))]);
    expect(dump).not.toContain(sid);
    // The list and revoke speak the public id; the secret sid names nothing there.
    expect((await list(a.access_token)).body.map((s: { id: string }) => s.id)).toContain(row.id);
    expect((await revoke(a.access_token, sid)).status).toBe(404);
    expect((await t.json("GET", ME, { token: a.access_token })).status).toBe(200);
  });

  test("a database copy's session id forges nothing: a token whose sid is the row's public id is refused", async () => {
    const a = await signIn();
    const row = (await sessionOf(t, a.access_token))!;
    const forged = await forge(t, a.access_token, { sid: row.id });
    expect(denial(await t.json("GET", ME, { token: forged }))).toEqual({ status: 401, code: "token_invalid", www: "Bearer" });
  });
});
