import { afterAll, describe, expect, test } from "bun:test";
import { type TestApp, setCookies, testApp } from "../../helpers";
import { ME, allAudit, claimsOf, clockedApp } from "../support";
import { enable } from "../two-factor/support";
import { askLink, newestToken, outboxLinks, tokenOf, verifyToken } from "./support";
import { testSql } from "../../support/sql";

const apps: TestApp[] = [];
afterAll(() => {
  for (const a of apps) a.close();
});
const track = <T extends { t: TestApp }>(x: T) => (apps.push(x.t), x);

async function orgWithLink(subdomain = "acme") {
  const { t, clock } = track(clockedApp());
  const org = await t.signup(subdomain);
  await askLink(t, org.email, { tenant: subdomain });
  return { t, clock, org, token: await newestToken(t) };
}

describe("POST /auth/magic-verify", () => {
  test("a token signs in once: token pair, cookies, a magic_link session; then 401 invalid_token", async () => {
    const { t, org, token } = await orgWithLink();
    const r = await verifyToken(t, token, { tenant: "acme" });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["access_token", "refresh_token", "token_type"]);
    expect(r.body.token_type).toBe("bearer");
    const cookies = setCookies(r.res);
    expect(cookies.svc_session!.value).toBe(r.body.access_token);
    expect(cookies.svc_refresh!.attrs.path).toBe("/api/v1/auth");
    expect(claimsOf(r.body.access_token)).toMatchObject({ sub: org.user.id, tid: org.tenant.id, typ: "access" });
    expect((await t.json("GET", ME, { token: r.body.access_token })).body.user.id).toBe(org.user.id);

    const success = (await allAudit(t)).filter((a) => a.action === "login.success").at(-1)!;
    expect(JSON.parse(String(success.detail)).method).toBe("magic_link");

    const again = await verifyToken(t, token, { tenant: "acme" });
    expect(again.status).toBe(401);
    expect(again.body).toEqual({ detail: expect.any(String), code: "invalid_token" });
    const invalid = (await allAudit(t)).filter((a) => a.action === "magic_link.invalid");
    expect(invalid).toHaveLength(1);
    expect(String(invalid[0]!.detail)).not.toContain(token);
  });

  test("unknown tokens are 401 invalid_token, with or without a tenant", async () => {
    const { t } = track({ t: testApp() });
    await t.signup("acme");
    for (const o of [{}, { tenant: "acme" }]) {
      const r = await verifyToken(t, "x".repeat(43), o);
      expect(r.status).toBe(401);
      expect(r.body.code).toBe("invalid_token");
    }
  });

  test("the link lasts 10 minutes", async () => {
    const { t, clock, org } = await orgWithLink();
    clock.advance(599_000);
    // A second link asked for now, to spend at the 10-minute mark of the first.
    await askLink(t, org.email, { tenant: "acme" });
    const [second, first] = (await outboxLinks(t)).map(tokenOf);
    clock.advance(1_000);
    expect((await verifyToken(t, first, { tenant: "acme" })).body.code).toBe("invalid_token");
    expect((await verifyToken(t, second, { tenant: "acme" })).status).toBe(200);
  });

  test("on another workspace's host: 403 tenant_mismatch, and the link still works where it belongs", async () => {
    const { t, token } = await orgWithLink("acme");
    await t.signup("beta");
    const wrong = await verifyToken(t, token, { tenant: "beta" });
    expect(wrong.status).toBe(403);
    expect(wrong.body.code).toBe("tenant_mismatch");
    expect(setCookies(wrong.res).svc_session).toBeUndefined();
    expect((await verifyToken(t, token, { headers: { "x-tenant": "acme" } })).status).toBe(200);
  });

  test("without a tenant, the token names its own workspace", async () => {
    const { t, org, token } = await orgWithLink("acme");
    const r = await verifyToken(t, token);
    expect(r.status).toBe(200);
    expect(claimsOf(r.body.access_token).tid).toBe(org.tenant.id);
  });

  test("concurrent verifies of one token: exactly one signs in", async () => {
    const { t, token } = await orgWithLink();
    const results = await Promise.all(Array.from({ length: 8 }, () => verifyToken(t, token, { tenant: "acme" })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 401 && r.body.code === "invalid_token")).toHaveLength(7);
    const sessions = (await testSql(t.ctx).get("SELECT COUNT(*) AS n FROM sessions WHERE method = 'magic_link'")) as { n: number };
    expect(sessions.n).toBe(1);
  });

  test("signing in with one link retires the user's other outstanding links", async () => {
    const { t, org } = await orgWithLink();
    await askLink(t, org.email, { tenant: "acme" });
    const [newer, older] = (await outboxLinks(t)).map(tokenOf);
    expect((await verifyToken(t, newer, { tenant: "acme" })).status).toBe(200);
    expect((await verifyToken(t, older, { tenant: "acme" })).body.code).toBe("invalid_token");
  });

  test("magic-verify goes through ctx.signIn: a user with 2FA on gets the challenge, no cookies", async () => {
    const { t, org } = await orgWithLink();
    await enable(t, org.access_token);
    await askLink(t, org.email, { tenant: "acme" });
    const r = await verifyToken(t, await newestToken(t), { tenant: "acme" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ requires_2fa: true, temp_token: expect.any(String) });
    expect(setCookies(r.res).svc_session).toBeUndefined();
  });

  test("the sign-in step is ctx.signIn, called with the user and method magic_link", async () => {
    const { t, org, token } = await orgWithLink();
    const calls: Array<[string, string]> = [];
    const real = t.ctx.signIn;
    t.ctx.signIn = async (user, method) => {
      calls.push([user.id, method]);
      return { kind: "challenge", tempToken: "stub-temp-token" };
    };
    try {
      const r = await verifyToken(t, token, { tenant: "acme" });
      expect(r.body).toEqual({ requires_2fa: true, temp_token: "stub-temp-token" });
    } finally {
      t.ctx.signIn = real;
    }
    expect(calls).toEqual([[org.user.id, "magic_link"]]);
  });

  test("422 shapes; the token is never echoed", async () => {
    const { t } = track({ t: testApp() });
    const missing = await verifyToken(t, undefined);
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({ loc: ["body", "token"], type: "missing" });
    const long = "s".repeat(300);
    const tooLong = await verifyToken(t, long);
    expect(tooLong.body.detail[0]).toMatchObject({ loc: ["body", "token"], type: "string_too_long" });
    expect(JSON.stringify(tooLong.body)).not.toContain(long);
    const wrongType = await verifyToken(t, 12345);
    expect(wrongType.body.detail[0]).toMatchObject({ loc: ["body", "token"], type: "string_type" });
  });

  test("no token, link or mail body in any log line of the whole flow", async () => {
    const { t, org, token } = await orgWithLink();
    const [row] = (await t.ctx.repos.mail.list()).filter((r) => r.kind === "magic_link");
    await verifyToken(t, token, { tenant: "acme" });
    await verifyToken(t, token, { tenant: "acme" });
    await askLink(t, "nobody@acme.test", { tenant: "acme" });
    const logged = JSON.stringify(t.logs);
    expect(t.logs.length).toBeGreaterThan(3);
    expect(logged).not.toContain(token);
    expect(logged).not.toContain(encodeURIComponent(token));
    expect(logged).not.toContain("#token=");
    expect(logged).not.toContain(row!.subject);
    expect(logged).not.toContain(org.email);
  });
});
