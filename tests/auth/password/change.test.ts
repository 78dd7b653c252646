import { afterEach, describe, expect, test } from "bun:test";
import { SESSION_COOKIE } from "../../../src/http/cookies";
import { type TestApp, browserHeaders, testApp } from "../../helpers";
import { LOGIN, ME, allAudit, login } from "../support";
import { CHANGE } from "./support";
import { testSql } from "../../support/sql";

const apps: TestApp[] = [];
afterEach(() => {
  for (const t of apps.splice(0)) t.close();
});
const NEW_PASSWORD = "a brand new passphrase";

describe("POST /auth/password/change", () => {
  test("changes the password, keeps this session, ends the others and outstanding 2FA challenges", async () => {
    const t = testApp();
    apps.push(t);
    const org = await t.signup("acme");
    const other = await login(t, org.email, org.password, { "x-tenant": "acme" });
    // An outstanding challenge row of this user (a temp_token in flight).
    await testSql(t.ctx).run("INSERT INTO sign_in_challenges (id, tenant_id, user_id, method, created_at, expires_at) VALUES ('c1', ?1, ?2, 'password', ?3, ?4)", org.tenant.id, org.user.id, Date.now(), Date.now() + 300_000);
    const r = await t.json("POST", CHANGE, { token: org.access_token, body: { current_password: org.password, new_password: NEW_PASSWORD } });
    expect(r.status).toBe(200);
    expect(r.body.revoked).toBe(1);
    expect((await t.json("GET", ME, { token: org.access_token })).status).toBe(200);
    expect((await t.json("GET", ME, { token: other.body.access_token })).body.code).toBe("session_revoked");
    expect(await testSql(t.ctx).get("SELECT count(*) AS n FROM sign_in_challenges")).toEqual({ n: 0 });
    expect((await login(t, org.email, org.password, { "x-tenant": "acme" })).status).toBe(401);
    expect((await login(t, org.email, NEW_PASSWORD, { "x-tenant": "acme" })).status).toBe(200);
    expect((await allAudit(t)).filter((a) => a.action === "password.changed")).toHaveLength(1);
  });

  test("a wrong current password is 401 invalid_credentials and counts toward the login lock", async () => {
    const t = testApp({ limits: { loginPerAccount: { name: "login-account", max: 3, windowMs: 15 * 60_000 } } });
    apps.push(t);
    const org = await t.signup("acme");
    for (let i = 0; i < 2; i++) {
      const r = await t.json("POST", CHANGE, { token: org.access_token, body: { current_password: "wrong password!", new_password: NEW_PASSWORD } });
      expect(r.status).toBe(401);
      expect(r.body.code).toBe("invalid_credentials");
    }
    // The third attempt of the account's window is a login: still allowed but wrong.
    expect((await t.json("POST", LOGIN, { body: { email: org.email, password: "wrong again!" }, tenant: "acme" })).status).toBe(401);
    // The fourth is over the limit, on either path.
    const locked = await login(t, org.email, org.password, { "x-tenant": "acme" });
    expect(locked.status).toBe(429);
    const change = await t.json("POST", CHANGE, { token: org.access_token, body: { current_password: org.password, new_password: NEW_PASSWORD } });
    expect(change.status).toBe(429);
    expect((await allAudit(t)).filter((a) => a.action === "password.change_failure")).toHaveLength(3);
  });

  test("needs a session; a cookie write needs the same-site headers (CSRF)", async () => {
    const t = testApp();
    apps.push(t);
    const org = await t.signup("acme");
    const body = { current_password: org.password, new_password: NEW_PASSWORD };
    expect((await t.json("POST", CHANGE, { body })).status).toBe(401);
    const cross = await t.json("POST", CHANGE, { body, cookies: { [SESSION_COOKIE]: org.access_token }, headers: { origin: "https://evil.example", "sec-fetch-site": "cross-site" } });
    expect(cross.status).toBe(403);
    expect(cross.body.code).toBe("csrf_failed");
    const same = await t.json("POST", CHANGE, { body, cookies: { [SESSION_COOKIE]: org.access_token }, headers: browserHeaders() });
    expect(same.status).toBe(200);
  });

  test("422 for a short new password", async () => {
    const t = testApp();
    apps.push(t);
    const org = await t.signup("acme");
    const r = await t.json("POST", CHANGE, { token: org.access_token, body: { current_password: org.password, new_password: "short" } });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].loc).toEqual(["body", "new_password"]);
  });
});
