import { describe, expect, test } from "bun:test";
import { browserHeaders, setCookies } from "../helpers";
import { OPERATOR_EMAIL, OPERATOR_PASSWORD, operatorAppPerTest } from "./operator-kit";

/** Issue 34, item 4: the operators' sign-in, sessions and their separation from every organization's. */

const setup = operatorAppPerTest();

describe("operator sign-in", () => {
  test("password, then the TOTP code: a bearer token and the svc_operator cookie (HttpOnly, Strict, host-only, the console's path)", async () => {
    const { app, code, clock } = await setup();
    const first = await app.json("POST", "/api/v1/operator/auth/login", { body: { email: OPERATOR_EMAIL.toUpperCase(), password: OPERATOR_PASSWORD } });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ requires_2fa: true, temp_token: expect.any(String) });
    clock.t += 30_000;
    const res = await app.request("POST", "/api/v1/operator/auth/2fa/verify", { body: { temp_token: first.body.temp_token, code: code() } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { token_type: string; access_token: string };
    expect(body.token_type).toBe("bearer");
    expect(body.access_token).toMatch(/^op_/);
    const cookie = setCookies(res).svc_operator!;
    expect(cookie.value).toBe(body.access_token);
    expect(cookie.attrs).toMatchObject({ httponly: true, samesite: "Strict", path: "/api/v1/operator", "max-age": String(8 * 3600) });
    expect(cookie.attrs.domain).toBeUndefined();
    expect(setCookies(res).svc_session).toBeUndefined();

    const me = await app.json("GET", "/api/v1/operator/auth/me", { token: body.access_token });
    expect(me.status).toBe(200);
    expect(me.body.email).toBe(OPERATOR_EMAIL);
    expect((await app.json("GET", "/api/v1/operator/auth/me", { cookies: { svc_operator: body.access_token } })).status).toBe(200);
    // The temp_token was spent by the verify that succeeded.
    clock.t += 30_000;
    const again = await app.json("POST", "/api/v1/operator/auth/2fa/verify", { body: { temp_token: first.body.temp_token, code: code() } });
    expect(again.status).toBe(401);
    expect(again.res.headers.get("www-authenticate")).toBe("Bearer");
  });

  test("a wrong code is 401 and keeps the temp_token; a code is never accepted twice; wrong passwords are 401", async () => {
    const { app, code, clock } = await setup();
    const first = await app.json("POST", "/api/v1/operator/auth/login", { body: { email: OPERATOR_EMAIL, password: OPERATOR_PASSWORD } });
    const right = code();
    const wrong = right === "000000" ? "111111" : "000000";
    const bad = await app.json("POST", "/api/v1/operator/auth/2fa/verify", { body: { temp_token: first.body.temp_token, code: wrong } });
    expect(bad.status).toBe(401);
    expect(bad.body.code).toBe("invalid_2fa_code");
    expect(bad.res.headers.get("www-authenticate")).toBe("Bearer");
    const ok = await app.json("POST", "/api/v1/operator/auth/2fa/verify", { body: { temp_token: first.body.temp_token, code: right } });
    expect(ok.status).toBe(200);
    // The same code in the same step, for a new challenge: refused (replay).
    const second = await app.json("POST", "/api/v1/operator/auth/login", { body: { email: OPERATOR_EMAIL, password: OPERATOR_PASSWORD } });
    expect((await app.json("POST", "/api/v1/operator/auth/2fa/verify", { body: { temp_token: second.body.temp_token, code: right } })).status).toBe(401);
    clock.t += 30_000;
    expect((await app.json("POST", "/api/v1/operator/auth/2fa/verify", { body: { temp_token: second.body.temp_token, code: code() } })).status).toBe(200);

    for (const body of [{ email: OPERATOR_EMAIL, password: "not the password" }, { email: "nobody@server.test", password: OPERATOR_PASSWORD }]) {
      const r = await app.json("POST", "/api/v1/operator/auth/login", { body });
      expect(r.status).toBe(401);
      expect(r.body.code).toBe("invalid_credentials");
    }
    const audit = await app.json("GET", "/api/v1/operator/audit", { token: ok.body.access_token, headers: {} });
    const actions = (audit.body.items as { action: string }[]).map((a) => a.action);
    expect(actions).toEqual(expect.arrayContaining(["sign_in.success", "sign_in.code_failure", "sign_in.failure", "operator.created"]));
  });

  test("ten wrong passwords lock the account from that source: the right one is then 429 too", async () => {
    const { app } = await setup();
    for (let i = 0; i < 10; i++) expect((await app.json("POST", "/api/v1/operator/auth/login", { body: { email: OPERATOR_EMAIL, password: `wrong ${i} password` } })).status).toBe(401);
    const locked = await app.json("POST", "/api/v1/operator/auth/login", { body: { email: OPERATOR_EMAIL, password: OPERATOR_PASSWORD } });
    expect(locked.status).toBe(429);
    expect(Number(locked.res.headers.get("retry-after"))).toBeGreaterThan(0);
    const rows = await app.ctx.repos.operators.auditPage(50, 0);
    expect(rows.rows.map((r) => r.action)).toContain("sign_in.locked");
  });

  test("sessions end after 30 minutes unused and 8 hours after sign-in; logout ends one at once", async () => {
    const { app, clock, signIn } = await setup();
    const token = await signIn();
    clock.t += 29 * 60_000;
    expect((await app.json("GET", "/api/v1/operator/auth/me", { token })).status).toBe(200);
    clock.t += 31 * 60_000;
    expect((await app.json("GET", "/api/v1/operator/auth/me", { token })).status).toBe(401);

    const kept = await signIn();
    // Used every 29 minutes: alive until its eighth hour, then over whatever the use.
    for (let i = 1; i <= 17; i++) {
      clock.t += 29 * 60_000;
      expect({ minutes: i * 29, status: (await app.json("GET", "/api/v1/operator/overview", { token: kept })).status }).toEqual({ minutes: i * 29, status: i * 29 < 480 ? 200 : 401 });
    }
    const other = await signIn();
    const out = await app.json("POST", "/api/v1/operator/auth/logout", { token: other });
    expect(out.status).toBe(200);
    expect((await app.json("GET", "/api/v1/operator/auth/me", { token: other })).status).toBe(401);
  });
});

describe("operators and organizations never share credentials", () => {
  test("an organization's token or cookie opens no operator route; an operator's token or cookie opens no organization route", async () => {
    const { app, signIn } = await setup();
    const org = await app.signup("acme");
    const op = await signIn();
    // Organization → console: bearer and cookie.
    for (const o of [{ token: org.access_token }, { cookies: { svc_session: org.access_token } }]) {
      const r = await app.json("GET", "/api/v1/operator/overview", o);
      expect(r.status).toBe(401);
      expect(r.res.headers.get("www-authenticate")).toBe("Bearer");
    }
    // Console → organization: bearer and cookie, on the organization's host and on the base domain.
    for (const tenant of ["acme", undefined]) {
      for (const o of [{ token: op }, { cookies: { svc_operator: op } }]) {
        const r = await app.json("GET", "/api/v1/auth/me", { ...o, tenant });
        expect(r.status).toBe(401);
        expect(r.res.headers.get("www-authenticate")).toBe("Bearer");
      }
    }
    // Both held at once: each side takes its own.
    expect((await app.json("GET", "/api/v1/operator/overview", { cookies: { svc_session: org.access_token, svc_operator: op } })).status).toBe(200);
    expect((await app.json("GET", "/api/v1/auth/me", { cookies: { svc_session: org.access_token, svc_operator: op }, tenant: "acme" })).status).toBe(200);
  });

  test("the console is 404 on an organization's host or with X-Tenant, sign-in included", async () => {
    const { app, signIn } = await setup();
    await app.signup("acme");
    const op = await signIn();
    const login = await app.json("POST", "/api/v1/operator/auth/login", { body: { email: OPERATOR_EMAIL, password: OPERATOR_PASSWORD }, tenant: "acme" });
    expect(login.status).toBe(404);
    for (const path of ["/api/v1/operator/server", "/api/v1/operator/organizations"]) {
      expect((await app.json("GET", path, { token: op, tenant: "acme" })).status).toBe(404);
      expect((await app.json("GET", path, { token: op, headers: { "x-tenant": "acme" } })).status).toBe(404);
      expect((await app.json("GET", path, { token: op, tenant: "nosuchorg" })).status).toBe(404);
      expect((await app.json("GET", path, { token: op })).status).toBe(200);
    }
  });

  test("a cookie write needs a JSON body from the base domain's own origin (CSRF)", async () => {
    const { app, signIn } = await setup();
    const op = await signIn();
    const cross = await app.json("POST", "/api/v1/operator/auth/logout", { cookies: { svc_operator: op }, body: {}, headers: { ...browserHeaders("https://evil.test") } });
    expect(cross.status).toBe(403);
    expect(cross.body.code).toBe("csrf_failed");
    const same = await app.json("POST", "/api/v1/operator/auth/logout", { cookies: { svc_operator: op }, body: {}, headers: browserHeaders("http://localhost:8000") });
    expect(same.status).toBe(200);
  });
});
