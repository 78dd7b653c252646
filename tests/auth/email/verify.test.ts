import { afterEach, describe, expect, test } from "bun:test";
import { type TestApp, testApp } from "../../helpers";
import { LOGIN, ME, allAudit, clockedApp, login } from "../support";
import { askLink } from "../magic-link/support";
import { linksOf, newestTokenOf } from "../password/support";
import { testSql } from "../../support/sql";

const VERIFY = "/api/v1/auth/email/verify";
const RESEND = "/api/v1/auth/email/resend";
const apps: TestApp[] = [];
afterEach(() => {
  for (const t of apps.splice(0)) t.close();
});
const track = <T extends { t: TestApp }>(x: T) => (apps.push(x.t), x);
const meOf = async (t: TestApp, token: string) => (await t.json("GET", ME, { token })).body.user;

describe("email verification", () => {
  test("signup mails a 24-hour link; verify proves the address once, with no session needed", async () => {
    const { t } = track({ t: testApp() });
    const org = await t.signup("acme");
    expect(org.user).toMatchObject({ email_verified: false, email_verified_at: null });
    const links = await linksOf(t, "email_verification");
    expect(links).toHaveLength(1);
    expect(links[0]!.startsWith("http://acme.localhost:8000/verify-email#token=")).toBe(true);
    const token = await newestTokenOf(t, "email_verification");

    const r = await t.json("POST", VERIFY, { body: { token } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ detail: "Your email address is verified.", email: org.email });
    const me = await meOf(t, org.access_token);
    expect(me.email_verified).toBe(true);
    expect(me.email_verified_at).toBe(r.body.email_verified_at);

    const again = await t.json("POST", VERIFY, { body: { token } });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe("verification_token_invalid");
    expect((await allAudit(t)).map((a) => a.action)).toEqual(expect.arrayContaining(["email.verification_sent", "email.verified", "email.verification_invalid"]));
  });

  test("an expired or unknown token is 400 verification_token_invalid", async () => {
    const { t, clock } = track(clockedApp());
    const org = await t.signup("acme");
    const token = await newestTokenOf(t, "email_verification");
    clock.advance(24 * 60 * 60_000 + 1);
    for (const tk of [token, "nope"]) {
      const r = await t.json("POST", VERIFY, { body: { token: tk } });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe("verification_token_invalid");
    }
    // (The access token has expired by now: the row says it.)
    expect(await testSql(t.ctx).get("SELECT email_verified_at FROM users WHERE id = ?1", org.user.id)).toEqual({ email_verified_at: null });
  });

  test("resend: a new link for the signed-in user, limited; 409 once verified", async () => {
    const { t } = track({ t: testApp() });
    const org = await t.signup("acme");
    expect((await t.json("POST", RESEND)).status).toBe(401);
    for (let i = 0; i < 3; i++) expect((await t.json("POST", RESEND, { token: org.access_token })).status).toBe(202);
    const limited = await t.json("POST", RESEND, { token: org.access_token });
    expect(limited.status).toBe(429);
    expect(await linksOf(t, "email_verification")).toHaveLength(4);
    const token = await newestTokenOf(t, "email_verification");
    expect((await t.json("POST", VERIFY, { body: { token } })).status).toBe(200);
    const done = await t.json("POST", RESEND, { token: org.access_token });
    expect(done.status).toBe(409);
    expect(done.body.code).toBe("email_already_verified");
  });

  test("a used magic link proves the address", async () => {
    const { t } = track({ t: testApp() });
    const org = await t.signup("acme");
    await askLink(t, org.email, { tenant: "acme" });
    const link = (await t.ctx.repos.mail.list()).find((r) => r.kind === "magic_link")!.link!;
    const token = decodeURIComponent(new URL(link).hash.slice(7));
    const r = await t.json("POST", "/api/v1/auth/magic-verify", { body: { token }, tenant: "acme" });
    expect(r.status).toBe(200);
    expect((await meOf(t, r.body.access_token)).email_verified).toBe(true);
  });

  test("an accepted invitation proves the address", async () => {
    const { t } = track({ t: testApp() });
    const org = await t.signup("acme");
    const inv = await t.json("POST", "/api/v1/users/invite", { token: org.access_token, tenant: "acme", body: { email: "new@acme.test" } });
    expect(inv.status).toBe(201);
    const token = await newestTokenOf(t, "invitation");
    const r = await t.json("POST", "/api/v1/auth/invitations/accept", { body: { token, password: "a member's passphrase" } });
    expect(r.status).toBe(201);
    expect(r.body.user).toMatchObject({ email_verified: true });
  });
});

describe("a workspace found by address alone prefers proven addresses", () => {
  test("sign-in without a tenant: an unverified account opened later with the same password does not get in the way", async () => {
    const { t } = track({ t: testApp() });
    const email = "owner@example.com";
    const mine = await t.signup("mine", { email });
    expect((await t.json("POST", VERIFY, { body: { token: await newestTokenOf(t, "email_verification") } })).status).toBe(200);
    // Someone else opens a workspace with this address (and, worst case, the same password).
    await t.signup("squat", { email });
    const r = await t.json("POST", LOGIN, { body: { email, password: mine.password } });
    expect(r.status).toBe(200);
    expect((await meOf(t, r.body.access_token)).tenant_id).toBe(mine.tenant.id);
  });

  test("without any verified account, unverified ones still count (tenant_required when two match)", async () => {
    const { t } = track({ t: testApp() });
    const email = "owner@example.com";
    await t.signup("one", { email });
    await t.signup("two", { email });
    const r = await login(t, email, "correct horse battery");
    expect(r.status).toBe(400);
    expect(r.body.code).toBe("tenant_required");
  });

  test("magic links without a tenant go only to the verified account", async () => {
    const { t } = track({ t: testApp() });
    const email = "owner@example.com";
    await t.signup("mine", { email });
    expect((await t.json("POST", VERIFY, { body: { token: await newestTokenOf(t, "email_verification") } })).status).toBe(200);
    await t.signup("squat", { email });
    await askLink(t, email);
    const hosts = (await linksOf(t, "magic_link")).map((l) => new URL(l).hostname);
    expect(hosts).toEqual(["mine.localhost"]);
  });
});
