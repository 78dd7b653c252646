import { afterAll, describe, expect, test } from "bun:test";
import { setCookies, testApp } from "../helpers";
import { LOGIN, ME, claimsOf, login } from "./support";

const THIRTY_DAYS = 30 * 86400;

describe("POST /auth/login on localhost", () => {
  const t = testApp();
  afterAll(() => t.close());
  let org: Awaited<ReturnType<typeof t.signup>>;

  test("success answers the token pair and nothing else", async () => {
    org = await t.signup("acme");
    const r = await login(t, org.email, org.password);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["access_token", "refresh_token", "token_type"]);
    expect(r.body.token_type).toBe("bearer");
    const access = claimsOf(r.body.access_token);
    const refresh = claimsOf(r.body.refresh_token);
    expect(access.typ).toBe("access");
    expect(refresh.typ).toBe("refresh");
    expect(access.sub).toBe(org.user.id);
    expect(access.tid).toBe(org.tenant.id);
    expect(access.sid).toBe(refresh.sid as string);
    // A new session, not the signup's.
    expect(access.sid).not.toBe(claimsOf(org.access_token).sid as string);
    expect((access.exp as number) - (access.iat as number)).toBe(900);
    // Token responses are never cached (RFC 6749 §5.1).
    expect(r.headers.get("cache-control")).toBe("no-store");
  });

  test("sets svc_session and svc_refresh with the cookies' attributes, host-only on localhost", async () => {
    const r = await login(t, org.email, org.password);
    const c = setCookies(r.res);
    expect(Object.keys(c).sort()).toEqual(["svc_refresh", "svc_session"]);

    const s = c.svc_session!;
    expect(s.value).toBe(r.body.access_token);
    expect(s.attrs.httponly).toBe(true);
    expect(String(s.attrs.samesite).toLowerCase()).toBe("lax");
    expect(s.attrs.path).toBe("/");
    expect(s.attrs["max-age"]).toBe("900");
    expect(s.attrs.domain).toBeUndefined();
    // Plain http on a development host: no Secure, or the browser would drop the cookie.
    expect(s.attrs.secure).toBeUndefined();

    const f = c.svc_refresh!;
    expect(f.value).toBe(r.body.refresh_token);
    expect(f.attrs.httponly).toBe(true);
    expect(String(f.attrs.samesite).toLowerCase()).toBe("strict");
    expect(f.attrs.path).toBe("/api/v1/auth");
    const maxAge = Number(f.attrs["max-age"]);
    expect(maxAge).toBeGreaterThanOrEqual(THIRTY_DAYS - 5);
    expect(maxAge).toBeLessThanOrEqual(THIRTY_DAYS);
    expect(f.attrs.domain).toBeUndefined();
  });

  test("wrong password and unknown email answer byte-identical 401 invalid_credentials", async () => {
    const wrong = await t.request("POST", LOGIN, { body: { email: org.email, password: "not the password" } });
    const unknown = await t.request("POST", LOGIN, { body: { email: "nobody@acme.test", password: "not the password" } });
    const unknownInTenant = await t.request("POST", LOGIN, {
      body: { email: "nobody@acme.test", password: org.password },
      headers: { "x-tenant": "acme" },
    });
    const bodies = await Promise.all([wrong, unknown, unknownInTenant].map((r) => r.text()));
    for (const r of [wrong, unknown, unknownInTenant]) {
      expect(r.status).toBe(401);
      expect(r.headers.getSetCookie()).toEqual([]);
    }
    expect(JSON.parse(bodies[0]!)).toEqual({ detail: expect.any(String), code: "invalid_credentials" });
    expect(bodies[1]).toBe(bodies[0]!);
    expect(bodies[2]).toBe(bodies[0]!);
    // Same headers too, apart from the per-request id and trace.
    const shape = (r: Response) => [...r.headers].filter(([k]) => k !== "x-request-id" && k !== "traceparent").sort();
    expect(shape(unknown)).toEqual(shape(wrong));
  });

  test("the email is matched case-insensitively and trimmed", async () => {
    for (const email of [org.email.toUpperCase(), `  ${org.email}  `, ` Admin@Acme.Test\t`]) {
      const r = await login(t, email, org.password);
      expect({ email, status: r.status }).toEqual({ email, status: 200 });
      expect(claimsOf(r.body.access_token).sub).toBe(org.user.id);
    }
  });

  test("the password is not trimmed nor case-folded", async () => {
    expect((await login(t, org.email, ` ${org.password}`)).status).toBe(401);
    expect((await login(t, org.email, org.password.toUpperCase())).status).toBe(401);
  });

  test("the access cookie alone authenticates GET /auth/me", async () => {
    const r = await login(t, org.email, org.password);
    const access = setCookies(r.res).svc_session!.value;
    const me = await t.json("GET", ME, { cookies: { svc_session: access } });
    expect(me.status).toBe(200);
    expect(me.body.user.id).toBe(org.user.id);
    expect(me.body.user.email).toBe(org.email);
    expect(me.body.tenant.subdomain).toBe("acme");
    expect(JSON.stringify(me.body)).not.toContain("argon2");
    // The refresh cookie is no access credential.
    const withRefresh = await t.json("GET", ME, { cookies: { svc_session: setCookies(r.res).svc_refresh!.value } });
    expect(withRefresh.status).toBe(401);
  });

  test("a tenant named by X-Tenant or Host scopes the login", async () => {
    expect((await login(t, org.email, org.password, { "x-tenant": "acme" })).status).toBe(200);
    const r = await t.json("POST", LOGIN, { body: { email: org.email, password: org.password }, tenant: "acme" });
    expect(r.status).toBe(200);
    const other = await t.signup("other");
    // acme's admin does not exist in "other": same answer as any wrong credentials.
    const cross = await login(t, org.email, org.password, { "x-tenant": "other" });
    expect(cross.status).toBe(401);
    expect(cross.body.code).toBe("invalid_credentials");
    expect((await login(t, other.email, other.password, { "x-tenant": "other" })).status).toBe(200);
  });

  test("the same email in two organizations: the password picks the account, or a tenant is needed", async () => {
    const a = await t.signup("dup1");
    await t.json("POST", "/api/v1/auth/signup", {
      body: { email: a.email, password: "another good password", tenant_name: "Dup 2", subdomain: "dup2" },
    });
    // Each password matches one account: that one is meant (tests/auth/login-any-tenant.test.ts).
    const r = await login(t, a.email, a.password);
    expect(r.status).toBe(200);
    expect(claimsOf(r.body.access_token).tid).toBe(a.tenant.id);
    await t.json("POST", "/api/v1/auth/signup", {
      body: { email: a.email, password: a.password, tenant_name: "Dup 3", subdomain: "dup3" },
    });
    // The same password in two of them: only then is the tenant needed.
    const both = await login(t, a.email, a.password);
    expect(both.status).toBe(400);
    expect(both.body.code).toBe("tenant_required");
    const named = await login(t, a.email, "another good password", { "x-tenant": "dup2" });
    expect(named.status).toBe(200);
    expect(claimsOf(named.body.access_token).tid).not.toBe(a.tenant.id);
  });

  test("a malformed body is a 422, not a 401", async () => {
    const r = await t.json("POST", LOGIN, { body: { email: "not-an-email", password: "x" } });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].loc).toEqual(["body", "email"]);
    const missing = await t.json("POST", LOGIN, { body: { email: org.email } });
    expect(missing.status).toBe(422);
    expect(missing.body.detail.some((d: { loc: unknown[] }) => d.loc[1] === "password")).toBe(true);
  });
});

describe("POST /auth/login on a real domain", () => {
  const t = testApp({ env: { SUITE_BASE_DOMAIN: "example.com" } });
  afterAll(() => t.close());

  test("cookies carry Domain=example.com and Secure", async () => {
    const org = await t.signup("acme");
    const r = await login(t, org.email, org.password);
    expect(r.status).toBe(200);
    const c = setCookies(r.res);
    for (const name of ["svc_session", "svc_refresh"]) {
      expect(c[name]!.attrs.domain).toBe("example.com");
      expect(c[name]!.attrs.secure).toBe(true);
      expect(c[name]!.attrs.httponly).toBe(true);
    }
    expect(c.svc_session!.attrs.path).toBe("/");
    expect(c.svc_refresh!.attrs.path).toBe("/api/v1/auth");
  });
});
