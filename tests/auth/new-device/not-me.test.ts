import { afterEach, describe, expect, test } from "bun:test";
import type { TestApp } from "../../helpers";
import { ME, addMember, allAudit } from "../support";
import { testSql } from "../../support/sql";
import { newestTokenOf } from "../password/support";
import { NOT_ME, browser, client, newDeviceApp, noticeMails, tokenOfLink } from "./support";

/**
 * "This wasn't me" (issue 33.2): the new-device mail's token, once, within 7 days, ends that
 * sign-in's session and every one started after it, and mails a password reset; audited.
 */

const apps: TestApp[] = [];
afterEach(() => {
  for (const t of apps.splice(0)) t.close();
});
const LOGIN = "/api/v1/auth/login";

async function scenario(env: Record<string, string> = {}) {
  const { t, clock } = newDeviceApp(apps, env);
  const org = await t.signup("acme");
  const signIn = async (headers: Record<string, string>) => {
    clock.advance(1000);
    const r = await t.json("POST", LOGIN, { body: { email: org.email, password: org.password }, tenant: "acme", headers });
    expect(r.status).toBe(200);
    return r.body.access_token as string;
  };
  const alive = async (token: string) => (await t.json("GET", ME, { token })).status === 200;
  return { t, clock, org, signIn, alive };
}

describe("POST /auth/not-me", () => {
  test("ends the new device's session and every later one, keeps earlier ones, mails a reset link, audited", async () => {
    const { t, org, signIn, alive } = await scenario();
    const before = await signIn(browser("192.0.2.1"));
    const intruder = await signIn(browser("203.0.113.66"));
    const later = await signIn(client("203.0.113.66"));
    const mails = await noticeMails(t);
    expect(mails).toHaveLength(3);
    const token = tokenOfLink(mails[1]!.link);

    const r = await t.json("POST", NOT_ME, { body: { token }, headers: browser("192.0.2.1") });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ detail: expect.stringContaining("Signed out"), sessions_ended: 2 });
    expect(await alive(intruder)).toBe(false);
    expect(await alive(later)).toBe(false);
    expect(await alive(before)).toBe(true);
    expect(await alive(org.access_token)).toBe(true);
    // The reset mail: a link that works.
    const reset = await newestTokenOf(t, "password_reset");
    expect((await t.json("POST", "/api/v1/auth/password/reset", { body: { token: reset, password: "zq-7 otter lamp mile" } })).status).toBe(200);
    const audit = (await allAudit(t)).filter((a) => a.action === "login.not_me");
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ tenant_id: org.tenant.id, user_id: org.user.id });
    expect(JSON.parse(String(audit[0]!.detail))).toMatchObject({ sessions_ended: 2 });
    expect(JSON.stringify(audit)).not.toContain(token);
  });

  test("works once; an unknown, malformed or expired token is 400 not_me_token_invalid and ends nothing", async () => {
    const { t, clock, org, signIn, alive } = await scenario();
    const intruder = await signIn(browser("203.0.113.66"));
    const token = tokenOfLink((await noticeMails(t))[0]!.link);
    const invalid = async (tok: string) => {
      const r = await t.json("POST", NOT_ME, { body: { token: tok } });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe("not_me_token_invalid");
    };
    await invalid(`${org.tenant.id}.${"A".repeat(43)}`);
    await invalid("junk");
    await invalid(token.split(".")[1]!);
    await invalid(`otherTenant.${token.split(".")[1]}`);
    expect(await alive(intruder)).toBe(true);

    // 7 days later it no longer works; a fresh one does, once.
    clock.advance(7 * 86_400_000 + 1);
    await invalid(token);
    const fresh = await signIn(browser("203.0.113.67"));
    const second = tokenOfLink((await noticeMails(t)).at(-1)!.link);
    expect((await t.json("POST", NOT_ME, { body: { token: second } })).status).toBe(200);
    expect(await alive(fresh)).toBe(false);
    await invalid(second);
    expect((await allAudit(t)).filter((a) => a.action === "login.not_me_invalid").length).toBeGreaterThanOrEqual(6);
  });

  test("two redeems of one token at once: one 200, one 400", async () => {
    const { t, signIn } = await scenario();
    await signIn(browser("203.0.113.66"));
    const token = tokenOfLink((await noticeMails(t))[0]!.link);
    const rs = await Promise.all([t.json("POST", NOT_ME, { body: { token } }), t.json("POST", NOT_ME, { body: { token } })]);
    expect(rs.map((r) => r.status).sort()).toEqual([200, 400]);
  });

  test("ends the user's outstanding 2FA challenges too; another user's sessions are untouched", async () => {
    const { t, org, signIn, alive } = await scenario();
    await addMember(t, org.tenant.id, "mate@acme.test", "zq-7 otter lamp mile");
    const mate = await t.json("POST", LOGIN, { body: { email: "mate@acme.test", password: "zq-7 otter lamp mile" }, tenant: "acme" });
    await signIn(browser("203.0.113.66"));
    // A challenge in flight (a temp_token the intruder holds), and one of the other user.
    for (const [id, user] of [["c-admin", org.user.id], ["c-mate", mate.body.access_token && (await t.json("GET", ME, { token: mate.body.access_token })).body.user.id]]) {
      await testSql(t.ctx).run("INSERT INTO sign_in_challenges (id, tenant_id, user_id, method, created_at, expires_at) VALUES (?1, ?2, ?3, 'password', ?4, ?5)", id, org.tenant.id, user, t.ctx.now(), t.ctx.now() + 300_000);
    }
    const token = tokenOfLink((await noticeMails(t)).find((m) => m.recipient === org.email)!.link);
    expect((await t.json("POST", NOT_ME, { body: { token } })).body.sessions_ended).toBe(1);
    expect(await alive(org.access_token)).toBe(true);
    expect(await alive(mate.body.access_token)).toBe(true);
    expect(await testSql(t.ctx).all("SELECT id FROM sign_in_challenges")).toEqual([{ id: "c-mate" }]);
  });

  test("is limited per IP address", async () => {
    const { t } = newDeviceApp(apps);
    let last = 0;
    for (let i = 0; i < 31; i++) last = (await t.json("POST", NOT_ME, { body: { token: "junk" }, headers: { "x-forwarded-for": "203.0.113.200" } })).status;
    expect(last).toBe(429);
  });
});
