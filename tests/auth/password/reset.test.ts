import { afterEach, describe, expect, test } from "bun:test";
import { hashToken } from "../../../src/kernel/ids";
import { type TestApp, testApp } from "../../helpers";
import { ME, allAudit, clockedApp, login } from "../support";
import { FORGOT, FORGOT_ACCEPTED, RESET, askReset, linksOf, newestTokenOf } from "./support";
import { testSql } from "../../support/sql";
import { mailSeam } from "../../support/backend";

const apps: TestApp[] = [];
afterEach(() => {
  for (const t of apps.splice(0)) t.close();
});
const track = <T extends { t: TestApp }>(x: T) => (apps.push(x.t), x);
const NEW_PASSWORD = "a brand new passphrase";

describe("POST /auth/password/forgot", () => {
  test("known and unknown addresses get the same 202, body and headers; only the known one gets a link", async () => {
    const { t } = track({ t: testApp() });
    const org = await t.signup("acme");
    const known = await askReset(t, org.email, { tenant: "acme" });
    const unknown = await askReset(t, "nobody@acme.test", { tenant: "acme" });
    for (const r of [known, unknown]) {
      expect(r.status).toBe(202);
      expect(r.body).toEqual(FORGOT_ACCEPTED);
    }
    expect([...known.headers.keys()].sort()).toEqual([...unknown.headers.keys()].sort());
    const links = await linksOf(t, "password_reset");
    expect(links).toHaveLength(1);
    expect(links[0]!.startsWith("http://acme.localhost:8000/reset-password#token=")).toBe(true);
    const [row] = (await t.ctx.repos.mail.list()).filter((r) => r.kind === "password_reset");
    expect(row!.recipient).toBe(org.email);
    expect(row!.text_body).toContain("30 minutes");
    // Stored as a hash only: the token itself is nowhere in the table.
    const token = await newestTokenOf(t, "password_reset");
    const stored = (await testSql(t.ctx).all("SELECT * FROM account_tokens WHERE purpose = 'password_reset'")) as Array<Record<string, unknown>>;
    expect(stored).toHaveLength(1);
    expect(stored[0]!.token_hash).toBe(hashToken(token));
    expect(JSON.stringify(stored)).not.toContain(token);
    expect(token.length).toBeGreaterThanOrEqual(22); // ≥ 128 bits of a 64-letter alphabet
    expect((await allAudit(t)).filter((a) => a.action === "password.reset_requested")).toHaveLength(1);
  });

  test("3 per address per 15 minutes, known or not, then 429; and a per-IP limit", async () => {
    const { t } = track({ t: testApp({ limits: { passwordForgotPerIp: { name: "password-forgot-ip", max: 8, windowMs: 60_000 } } }) });
    const org = await t.signup("acme");
    for (const email of [org.email, "ghost@acme.test"]) {
      for (let i = 0; i < 3; i++) expect((await askReset(t, email, { tenant: "acme" })).status).toBe(202);
      const limited = await askReset(t, email.toUpperCase(), { tenant: "acme" });
      expect(limited.status).toBe(429);
      expect(limited.body.code).toBe("rate_limited");
    }
    expect(await linksOf(t, "password_reset")).toHaveLength(3);
    // The IP has spent its 8: another address is refused too.
    expect((await askReset(t, "third@acme.test", { tenant: "acme" })).status).toBe(429);
  });

  test("without a tenant, one link per workspace the address belongs to", async () => {
    const { t } = track({ t: testApp() });
    const email = "shared@example.com";
    await t.signup("acme", { email });
    await t.signup("beta", { email });
    expect((await askReset(t, email)).status).toBe(202);
    const hosts = (await linksOf(t, "password_reset")).map((l) => new URL(l).hostname).sort();
    expect(hosts).toEqual(["acme.localhost", "beta.localhost"]);
  });

  test("the token row and its mail are one transaction: no mail, no token", async () => {
    const { t } = track({ t: testApp() });
    const org = await t.signup("acme");
    const real = mailSeam(t.ctx).enqueueInTx;
    mailSeam(t.ctx).enqueueInTx = () => {
      throw new Error("disk full");
    };
    try {
      expect((await askReset(t, org.email, { tenant: "acme" })).status).toBe(202);
    } finally {
      mailSeam(t.ctx).enqueueInTx = real;
    }
    expect(await testSql(t.ctx).get("SELECT count(*) AS n FROM account_tokens WHERE purpose = 'password_reset'")).toEqual({ n: 0 });
    expect(t.logs.some((l) => l.msg === "password reset not issued")).toBe(true);
  });

  test("422 for a malformed address", async () => {
    const { t } = track({ t: testApp() });
    const r = await t.json("POST", FORGOT, { body: { email: "not-an-address" } });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].loc).toEqual(["body", "email"]);
  });
});

describe("POST /auth/password/reset", () => {
  test("sets the password, ends every session and challenge, signs nobody in; the token works once", async () => {
    const { t } = track({ t: testApp() });
    const org = await t.signup("acme");
    const second = await login(t, org.email, org.password, { "x-tenant": "acme" });
    expect(second.status).toBe(200);
    await askReset(t, org.email, { tenant: "acme" });
    const token = await newestTokenOf(t, "password_reset");

    const r = await t.json("POST", RESET, { body: { token, password: NEW_PASSWORD } });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(["detail"]);
    expect(r.headers.get("set-cookie")).toBeNull();
    for (const access of [org.access_token, second.body.access_token]) {
      const me = await t.json("GET", ME, { token: access });
      expect(me.status).toBe(401);
      expect(me.body.code).toBe("session_revoked");
    }
    expect((await login(t, org.email, org.password, { "x-tenant": "acme" })).status).toBe(401);
    const fresh = await login(t, org.email, NEW_PASSWORD, { "x-tenant": "acme" });
    expect(fresh.status).toBe(200);
    // The link reached the mailbox: the address is proven.
    const me = await t.json("GET", ME, { token: fresh.body.access_token });
    expect(me.body.user.email_verified).toBe(true);

    const again = await t.json("POST", RESET, { body: { token, password: "yet another passphrase" } });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe("reset_token_invalid");
    const actions = (await allAudit(t)).map((a) => a.action);
    expect(actions).toContain("password.reset");
    expect(actions).toContain("password.reset_invalid");
  });

  test("expired and unknown tokens: 400 reset_token_invalid, password unchanged", async () => {
    const { t, clock } = track(clockedApp());
    const org = await t.signup("acme");
    await askReset(t, org.email, { tenant: "acme" });
    const token = await newestTokenOf(t, "password_reset");
    clock.advance(30 * 60_000 + 1);
    for (const tk of [token, "x".repeat(43)]) {
      const r = await t.json("POST", RESET, { body: { token: tk, password: NEW_PASSWORD } });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe("reset_token_invalid");
    }
    expect((await login(t, org.email, org.password, { "x-tenant": "acme" })).status).toBe(200);
  });

  test("a newer link retires nothing, but using one retires the others", async () => {
    const { t } = track({ t: testApp() });
    const org = await t.signup("acme");
    await askReset(t, org.email, { tenant: "acme" });
    await askReset(t, org.email, { tenant: "acme" });
    const [newer, older] = (await linksOf(t, "password_reset")).map((l) => decodeURIComponent(new URL(l).hash.slice(7)));
    expect((await t.json("POST", RESET, { body: { token: older, password: NEW_PASSWORD } })).status).toBe(200);
    const r = await t.json("POST", RESET, { body: { token: newer, password: "yet another passphrase" } });
    expect(r.body.code).toBe("reset_token_invalid");
  });

  test("concurrent resets with one token: exactly one wins", async () => {
    const { t } = track({ t: testApp() });
    const org = await t.signup("acme");
    await askReset(t, org.email, { tenant: "acme" });
    const token = await newestTokenOf(t, "password_reset");
    const results = await Promise.all([1, 2, 3].map((i) => t.json("POST", RESET, { body: { token, password: `${NEW_PASSWORD} ${i}` } })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400]);
  });

  test("a 2FA user signs in normally afterwards: the new password leads to the 2FA challenge", async () => {
    const { t } = track({ t: testApp() });
    const org = await t.signup("acme");
    // 2FA on (the login only looks at enabled_at before opening the challenge).
    await testSql(t.ctx).run("INSERT INTO user_totp (user_id, tenant_id, secret_enc, enabled_at, created_at, updated_at) VALUES (?1, ?2, 'x', ?3, ?3, ?3)", org.user.id, org.tenant.id, Date.now());
    await askReset(t, org.email, { tenant: "acme" });
    const token = await newestTokenOf(t, "password_reset");
    expect((await t.json("POST", RESET, { body: { token, password: NEW_PASSWORD } })).status).toBe(200);
    const r = await login(t, org.email, NEW_PASSWORD, { "x-tenant": "acme" });
    expect(r.status).toBe(200);
    expect(r.body.requires_2fa).toBe(true);
    expect(r.body.access_token).toBeUndefined();
  });

  test("422 for a short password", async () => {
    const { t } = track({ t: testApp() });
    const r = await t.json("POST", RESET, { body: { token: "abc", password: "short" } });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].loc).toEqual(["body", "password"]);
  });
});
