import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { type TestApp, browserHeaders, setCookies } from "../helpers";
import { ME, REFRESH, SESSIONS, claimsOf, clockedApp, denial, sessionIdOf, sessionOf } from "./support";

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

const byBody = (refresh_token: string, headers: Record<string, string> = {}) => t.json("POST", REFRESH, { body: { refresh_token }, headers });
const me = (token: string) => t.json("GET", ME, { token });
const revoked = { status: 401, code: "session_revoked", www: "Bearer" };
const sessionCount = async (token: string) => (await t.json("GET", SESSIONS, { token })).body.length as number;

describe("rotation", () => {
  test("by body: both tokens rotate, the session stays, cookies are set", async () => {
    clock.advance(60_000);
    const r = await byBody(org.refresh_token);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["access_token", "refresh_token", "token_type"]);
    expect(r.body.token_type).toBe("bearer");
    expect(r.body.access_token).not.toBe(org.access_token);
    expect(r.body.refresh_token).not.toBe(org.refresh_token);
    const [a, f] = [claimsOf(r.body.access_token), claimsOf(r.body.refresh_token)];
    expect(a.sid).toBe(claimsOf(org.access_token).sid as string);
    expect(f.sid).toBe(a.sid as string);
    expect(a.typ).toBe("access");
    expect(f.typ).toBe("refresh");
    expect(f.jti).not.toBe(claimsOf(org.refresh_token).jti as string);
    // Refresh never extends the session's absolute end.
    expect(f.exp).toBe(claimsOf(org.refresh_token).exp as number);
    expect((await me(r.body.access_token)).status).toBe(200);
    const c = setCookies(r.res);
    expect(c.svc_session?.value).toBe(r.body.access_token);
    expect(c.svc_refresh?.value).toBe(r.body.refresh_token);
    expect(c.svc_refresh?.attrs.path).toBe("/api/v1/auth");
    expect(c.svc_session?.attrs["max-age"]).toBe("900");
    // The new refresh token rotates in turn.
    clock.advance(60_000);
    const again = await byBody(r.body.refresh_token);
    expect(again.status).toBe(200);
    expect(again.body.refresh_token).not.toBe(r.body.refresh_token);
  });

  test("by the svc_refresh cookie with a same-site browser's headers, no body", async () => {
    clock.advance(60_000);
    const r = await t.json("POST", REFRESH, { cookies: { svc_refresh: org.refresh_token }, headers: browserHeaders() });
    expect(r.status).toBe(200);
    expect(r.body.refresh_token).not.toBe(org.refresh_token);
    const c = setCookies(r.res);
    expect(c.svc_session?.value).toBe(r.body.access_token);
    expect(c.svc_refresh?.value).toBe(r.body.refresh_token);
    expect(c.svc_refresh?.attrs.httponly).toBe(true);
    expect((await me(r.body.access_token)).status).toBe(200);
    // The rotated cookie works for the next refresh.
    clock.advance(60_000);
    const next = await t.json("POST", REFRESH, { cookies: { svc_refresh: c.svc_refresh!.value }, headers: browserHeaders() });
    expect(next.status).toBe(200);
  });

  test("the cookie path is CSRF-checked", async () => {
    const cookies = { svc_refresh: org.refresh_token };
    const bare = await t.json("POST", REFRESH, { cookies });
    expect(bare.status).toBe(403);
    expect(bare.body.code).toBe("csrf_failed");
    const cross = await t.json("POST", REFRESH, { cookies, headers: { ...browserHeaders(), "sec-fetch-site": "cross-site" } });
    expect(cross.status).toBe(403);
    const foreign = await t.json("POST", REFRESH, { cookies, headers: browserHeaders("https://evil.example") });
    expect(foreign.status).toBe(403);
    // None of those spent the token.
    expect((await t.json("POST", REFRESH, { cookies, headers: browserHeaders() })).status).toBe(200);
  });

  test("a refresh token on another organization's host: 403 tenant_mismatch", async () => {
    await t.signup("other");
    const r = await byBody(org.refresh_token, { "x-tenant": "other" });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe("tenant_mismatch");
  });
});

describe("reuse detection", () => {
  test("the old refresh token after the grace window revokes the whole session", async () => {
    const first = await byBody(org.refresh_token);
    expect(first.status).toBe(200);
    clock.advance(10_001);
    const replay = await byBody(org.refresh_token, { "user-agent": "thief" });
    expect(denial(replay)).toEqual(revoked);
    expect(replay.res.headers.getSetCookie().filter((c) => !c.includes("Max-Age=0"))).toEqual([]);
    // The legitimate holder's tokens die with the session.
    expect(denial(await me(first.body.access_token))).toEqual(revoked);
    expect(denial(await byBody(first.body.refresh_token))).toEqual(revoked);
    const audit = await t.ctx.repos.security.auditForTenant(org.tenant.id);
    const row = audit.find((a) => a.action === "session.refresh_reuse");
    expect(row).toBeDefined();
    expect(row!.user_id).toBe(org.user.id);
    expect(row!.user_agent).toBe("thief");
    expect(JSON.parse(row!.detail!).session_id).toBe((await sessionIdOf(t, org.access_token)));
  });

  test("a token two generations old is reuse even inside the grace window", async () => {
    const g1 = await byBody(org.refresh_token);
    clock.advance(20_000);
    const g2 = await byBody(g1.body.refresh_token);
    expect(g2.status).toBe(200);
    clock.advance(1000);
    expect(denial(await byBody(org.refresh_token))).toEqual(revoked);
    expect(denial(await me(g2.body.access_token))).toEqual(revoked);
  });

  test("reuse of one session does not touch the user's other sessions", async () => {
    const other = await t.json("POST", "/api/v1/auth/login", { body: { email: org.email, password: org.password } });
    await byBody(org.refresh_token);
    clock.advance(11_000);
    expect(denial(await byBody(org.refresh_token))).toEqual(revoked);
    expect((await me(other.body.access_token)).status).toBe(200);
  });
});

describe("two tabs", () => {
  test("the same refresh token twice within 10 s: both 200, same new refresh token, same session", async () => {
    const before = await sessionCount(org.access_token);
    const a = await byBody(org.refresh_token);
    clock.advance(9_000);
    const b = await byBody(org.refresh_token);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.body.refresh_token).toBe(a.body.refresh_token);
    expect(claimsOf(b.body.access_token).sid).toBe(claimsOf(a.body.access_token).sid as string);
    expect((await me(a.body.access_token)).status).toBe(200);
    expect((await me(b.body.access_token)).status).toBe(200);
    expect(await sessionCount(b.body.access_token)).toBe(before);
    // The shared new token moves the session on normally, once.
    clock.advance(60_000);
    const next = await byBody(a.body.refresh_token);
    expect(next.status).toBe(200);
    expect((await me(next.body.access_token)).status).toBe(200);
  });

  test("truly concurrent refreshes with the same token: both 200, one session", async () => {
    const before = await sessionCount(org.access_token);
    const [a, b] = await Promise.all([byBody(org.refresh_token), byBody(org.refresh_token)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.refresh_token).toBe(b.body.refresh_token);
    expect(claimsOf(a.body.access_token).sid).toBe(claimsOf(b.body.access_token).sid as string);
    expect(await sessionCount(a.body.access_token)).toBe(before);
    // Exactly one rotation happened: the session is at generation 1.
    const row = await sessionOf(t, a.body.access_token);
    expect(row!.refresh_gen).toBe(1);
    expect(row!.revoked_at).toBeNull();
  });

  test("many concurrent refreshes with the same token all succeed without revoking", async () => {
    const rs = await Promise.all(Array.from({ length: 5 }, () => byBody(org.refresh_token)));
    expect(rs.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(rs.map((r) => r.body.refresh_token)).size).toBe(1);
  });
});

describe("end of life", () => {
  test("refresh after the absolute 30-day expiry: 401 token_expired", async () => {
    clock.advance(29 * 86400_000);
    const mid = await byBody(org.refresh_token);
    expect(mid.status).toBe(200);
    clock.advance(86400_000 + 1000);
    expect(denial(await byBody(mid.body.refresh_token))).toEqual({ status: 401, code: "token_expired", www: "Bearer" });
  });

  test("the access token of a refresh made near the end expires with the session", async () => {
    clock.advance(30 * 86400_000 - 60_000);
    const late = await byBody(org.refresh_token);
    expect(late.status).toBe(200);
    const c = claimsOf(late.body.access_token);
    expect(c.exp).toBeLessThanOrEqual(claimsOf(org.refresh_token).exp as number);
    expect(Number(setCookies(late.res).svc_session!.attrs["max-age"])).toBeLessThanOrEqual(60);
  });

  test("refresh of a revoked session: 401 session_revoked", async () => {
    expect((await t.json("POST", "/api/v1/auth/logout", { token: org.access_token })).status).toBe(200);
    expect(denial(await byBody(org.refresh_token))).toEqual(revoked);
  });

  test("refresh after logout-all from another session: 401 session_revoked", async () => {
    const other = await t.json("POST", "/api/v1/auth/login", { body: { email: org.email, password: org.password } });
    await t.json("POST", "/api/v1/auth/logout-all", { token: other.body.access_token });
    expect(denial(await byBody(org.refresh_token))).toEqual(revoked);
    expect(denial(await byBody(other.body.refresh_token))).toEqual(revoked);
  });
});
