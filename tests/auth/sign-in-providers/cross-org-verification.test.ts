/**
 * An organization's own identity provider vouches for addresses inside that organization only
 * (issue 29.1): a throwaway workspace whose provider calls victim@example.com verified must not
 * change her sign-in, magic links or resets without a tenant, nor see her IP in its audit log.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ME, allAudit } from "../support";
import { askLink } from "../magic-link/support";
import { askReset } from "../password/support";
import { setCookies } from "../../helpers";
import { type OidcWorld, locationOf, oidcWorld, signInVia } from "../../support/oidc-world";
import { testSql } from "../../support/sql";

let w: OidcWorld;
let victim: Awaited<ReturnType<OidcWorld["t"]["signup"]>>;
let joinedId: string;
const VICTIM = "victim@example.com";
const HER = { "x-forwarded-for": "198.51.100.23", "user-agent": "Her Browser/1.0" };

beforeAll(async () => {
  w = await oidcWorld({ SUITE_TRUST_PROXY: "true" });
  // Her own workspace; she never clicked its verification mail.
  victim = await w.t.signup("vict", { email: VICTIM, password: "her own good password" });
  // The attacker's self-run provider (acme's, allowing example.com) says her address is his, verified.
  w.op.accounts.set("attacker", { email: VICTIM, email_verified: true });
  const joined = await signInVia(w.browser(), "acme", w.providerA.id, "attacker");
  expect(locationOf(joined)).toBe("/");
  const me = await w.t.json("GET", ME, { token: setCookies(joined).svc_session!.value });
  joinedId = me.body.user.id;
});
afterAll(async () => {
  await w.close();
});

test("a provider join records the provider's word, not a mailed proof; the answer says which", async () => {
  const row = (await testSql(w.t.ctx).get("SELECT email_verified_at, provider_verified_at FROM users WHERE id = ?1", joinedId)) as Record<string, unknown>;
  expect(row.email_verified_at).toBeNull();
  expect(row.provider_verified_at).toBeNumber();
  const users = await w.t.json("GET", "/api/v1/users", { token: w.acme.access_token });
  const joined = users.body.items.find((u: { id: string }) => u.id === joinedId);
  expect(joined).toMatchObject({ email: VICTIM, email_verified: true, email_verified_by: "provider" });
  expect(joined.email_verified_at).toBeString();
  const admin = users.body.items.find((u: { id: string }) => u.id === w.acme.user.id);
  expect(admin).toMatchObject({ email_verified: true, email_verified_by: "mail" });
});

test("her sign-in without a tenant still finds her own account", async () => {
  const r = await w.t.json("POST", "/api/v1/auth/login", { body: { email: VICTIM, password: "her own good password" }, headers: HER });
  expect(r.status).toBe(200);
  const me = await w.t.json("GET", ME, { token: r.body.access_token });
  expect(me.body.tenant.subdomain).toBe("vict");
});

test("her magic link and reset mail without a tenant reach her own workspace", async () => {
  expect((await askLink(w.t, VICTIM, { headers: HER })).status).toBe(202);
  expect((await askReset(w.t, VICTIM, { headers: HER })).status).toBe(202);
  const mails = (await w.t.ctx.repos.mail.list()).filter((m) => m.recipient === VICTIM && (m.kind === "magic_link" || m.kind === "password_reset"));
  const toHers = mails.filter((m) => m.tenant_id === victim.tenant.id).map((m) => m.kind).sort();
  expect(toHers).toEqual(["magic_link", "password_reset"]);
});

test("the attacker's audit log shows no IP or user agent of her requests that did not name his organization", async () => {
  expect((await w.t.json("POST", "/api/v1/auth/login", { body: { email: VICTIM, password: "a typo of hers" }, headers: HER })).status).toBe(401);
  const his = (await allAudit(w.t)).filter((a) => a.tenant_id === w.acme.tenant.id && a.user_id === joinedId && a.action !== "oauth.joined" && a.action !== "login.success");
  expect(his.map((a) => a.action).sort()).toEqual(expect.arrayContaining(["login.failure"]));
  for (const row of his) expect({ action: row.action, ip: row.ip, ua: row.user_agent }).toEqual({ action: row.action, ip: null, ua: null });
  // Her own organization still sees her requests in full.
  const hers = (await allAudit(w.t)).filter((a) => a.tenant_id === victim.tenant.id && a.action === "login.success");
  expect(hers[0]).toMatchObject({ ip: "198.51.100.23", user_agent: "Her Browser/1.0" });
});
