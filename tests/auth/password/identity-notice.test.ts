/**
 * The password mails name the linked identities (issue 29.3): an outside account linked by someone
 * else survives a password change, so the owner must see it and where to unlink it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type OidcWorld, oidcWorld } from "../../support/oidc-world";
import { testSql } from "../../support/sql";
import { CHANGE, RESET, askReset, tokenOf } from "./support";

let w: OidcWorld;
let firstLink = "";
beforeAll(async () => {
  w = await oidcWorld();
  // bolt's admin has an identity at bolt's provider (as the link flow leaves it).
  await testSql(w.t.ctx).run(
    "INSERT INTO user_identities (id, tenant_id, user_id, provider_id, issuer, subject, email, created_at) VALUES ('idn1', ?1, ?2, ?3, ?4, 'sub-1', 'someone@example.com', ?5)",
    w.bolt.tenant.id, w.bolt.user.id, w.providerB.id, w.op.issuer, w.clock.now(),
  );
});
afterAll(async () => {
  await w.close();
});

const mailsOf = async (kind: string) => (await w.t.ctx.repos.mail.list()).filter((m) => m.kind === kind && m.recipient === w.bolt.email);

test("the reset mail names each linked identity and where to review them", async () => {
  expect((await askReset(w.t, w.bolt.email, { tenant: "bolt" })).status).toBe(202);
  const [mail] = await mailsOf("password_reset");
  firstLink = mail!.link!;
  expect(mail!.text_body).toContain(`${w.providerB.name} (someone@example.com)`);
  expect(mail!.text_body).toContain("http://bolt.localhost:8000/settings");
  expect(mail!.html_body).toContain("someone@example.com");
});

test("a change of password mails a notice in the same commit, naming the linked identities", async () => {
  const r = await w.t.json("POST", CHANGE, { token: w.bolt.access_token, body: { current_password: w.bolt.password, new_password: "a brand new password" } });
  expect(r.status).toBe(200);
  const notices = await mailsOf("password_changed");
  expect(notices).toHaveLength(1);
  expect(notices[0]).toMatchObject({ subject: "Your password for Org bolt was changed", link: null, tenant_id: w.bolt.tenant.id });
  expect(notices[0]!.text_body).toContain(`${w.providerB.name} (someone@example.com)`);
  expect(notices[0]!.text_body).toContain("unlink it now: http://bolt.localhost:8000/settings");
});

test("a reset by the mailed link mails the notice too; an account with nothing linked is told so", async () => {
  // (The change retired the earlier link: a new one.)
  expect((await askReset(w.t, w.bolt.email, { tenant: "bolt" })).status).toBe(202);
  // The clock stands still: the new link is the one that is not the first mail's.
  const links = (await mailsOf("password_reset")).map((m) => m.link!);
  const token = tokenOf(links.find((l) => l !== firstLink)!);
  expect((await w.t.json("POST", RESET, { body: { token, password: "yet another password" } })).status).toBe(200);
  const notices = await mailsOf("password_changed");
  expect(notices.map((n) => n.subject).sort()).toEqual(["Your password for Org bolt was changed", "Your password for Org bolt was reset"]);

  const acme = await w.t.json("POST", CHANGE, { token: w.acme.access_token, body: { current_password: w.acme.password, new_password: "a brand new password" } });
  expect(acme.status).toBe(200);
  const plain = (await w.t.ctx.repos.mail.list()).find((m) => m.kind === "password_changed" && m.recipient === w.acme.email)!;
  expect(plain.text_body).toContain("No outside account");
});
