import { appCode } from "../../auth/two-factor/rfc6238";
import { SoftAuthenticator } from "../../support/soft-authenticator";
import { clockedApp, sessionIdOf } from "../../auth/support";

export const METRICS_TOKEN = "isolation-metrics-token-0123456789abcdef";
import type { TestApp } from "../../helpers";
import { hashToken, newId, newSecretToken, newTenantToken } from "../../../src/kernel/ids";
import { noteSecret } from "../ledger";
import { newestMailTo, tableColumns, testSql } from "../../support/sql";

/**
 * Two organizations with data in every feature, for the tenant-isolation test. Each has its own
 * word in every name it can carry (titles, notes, account, contact, user and tenant names), so
 * that a search, a list or an error body that shows the other tenant's data is caught by text.
 */

export const SHARED_EMAIL = "shared@people.test";

export interface Signed {
  id: string;
  email: string;
  password: string;
  access: string;
  refresh: string;
  sessionId: string;
}

export interface Tenant {
  word: string;
  subdomain: string;
  tenantId: string;
  admin: Signed;
  /** A member, invited and accepted; its email exists in both tenants. */
  member: Signed;
  profiles: { admin: string; standard: string };
  stage: { id: string; key: string };
  accountId: string;
  contactId: string;
  dealIds: string[];
  /** A note on the first deal, by the admin, naming the word. */
  noteId: string;
  /** A shared saved view of the deal list, by the admin, naming the word. */
  viewId: string;
  /** A finished import job (accounts). */
  jobId: string;
  /** A webhook (https, never reached: no sender runs here) and a delivery of its test event. */
  webhook: { id: string; deliveryId: string };
  invitations: { accepted: string; pending: { id: string; token: string }; revoked: { id: string; token: string } };
  /** An identity provider, and an identity of the admin linked through it. */
  oidc: { providerId: string; identityId: string };
}

/** Tenant A also holds every short-lived credential B could try to replay. */
export interface Victim extends Tenant {
  /** A refresh token already rotated away (a replay would trigger reuse detection). */
  rotatedRefresh: string;
  /** The member has 2FA on; a challenge is outstanding and this code would pass it. */
  tempToken: string;
  totpSecret: string;
  /** An unused magic-link token of the admin. */
  magicToken: string;
  /** A sign-in flow under way at A's provider: its state and its browser's cookie. */
  oauthFlow: { state: string; cookie: string };
  /**
   * The admin's passkey (its public id), a sign-in answer by it to an open challenge of A's host,
   * and a new credential answering an open registration challenge of the admin's: none used yet.
   */
  passkey: { id: string; assertion: unknown; registration: unknown };
}

export interface World {
  t: TestApp;
  clock: { now: () => number; advance: (ms: number) => void };
  a: Victim;
  b: Tenant;
  /** A valid TOTP code for A's member right now (not yet used). */
  code: () => string;
}

const API = "/api/v1";
const cap = (w: string) => w[0]!.toUpperCase() + w.slice(1);

async function ok(t: TestApp, method: string, path: string, o: Parameters<TestApp["json"]>[2], status: number) {
  const r = await t.json(method, `${API}${path}`, o);
  if (r.status !== status) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** An import job once it has finished (jobs are written after their 202). */
export async function finishedJob(t: TestApp, as: Parameters<TestApp["json"]>[2], id: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 2000; i++) {
    const j = await ok(t, "GET", `/crm/jobs/${id}`, as, 200);
    if (j.status !== "running") return j;
    await Bun.sleep(5);
  }
  throw new Error(`import job ${id} did not finish`);
}

/** The token of the newest mail to `recipient`, read from its link as the recipient would. */
export async function mailedToken(t: TestApp, recipient: string): Promise<string> {
  const row = await newestMailTo<{ link: string }>(t.ctx, recipient);
  const token = row?.link && new URL(row.link).hash.match(/token=([^&]+)/)?.[1];
  if (!token) throw new Error(`no mailed token for ${recipient}`);
  return decodeURIComponent(token);
}

async function populate(t: TestApp, subdomain: string, word: string): Promise<Tenant> {
  const W = cap(word);
  const signup = await t.signup(subdomain, { tenant_name: `${W} Holdings`, full_name: `${W} Founder` });
  const host = { tenant: subdomain };
  const admin = { token: signup.access_token, ...host };
  const tenantId = signup.tenant.id;
  const profiles = (await testSql(t.ctx).all("SELECT id, name FROM profiles WHERE tenant_id = ?1", tenantId)) as Array<{ id: string; name: string }>;

  const stage = await ok(t, "POST", "/crm/pipeline-stages", { ...admin, body: { key: `${word}-stage`, name: `${W} stage`, probability: 40 } }, 201);
  const account = await ok(t, "POST", "/crm/accounts", { ...admin, body: { name: `${W} Corp`, domain: `${word}.example`, industry: `${W} farming` } }, 201);
  const contact = await ok(t, "POST", "/crm/contacts", { ...admin, body: { first_name: W, last_name: "Person", email: `${word}@contact.test`, account_id: account.id } }, 201);

  // The member joins by invitation; the same address is a member of both tenants.
  const memberPassword = `${word} member password`;
  const inv = await ok(t, "POST", "/users/invite", { ...admin, body: { email: SHARED_EMAIL } }, 201);
  const joined = await ok(t, "POST", "/auth/invitations/accept", { ...host, body: { token: (await mailedToken(t, SHARED_EMAIL)), password: memberPassword, full_name: `${W} Member` } }, 201);
  // Addresses without the word: B invites the same ones in its own tenant.
  const pending = await ok(t, "POST", "/users/invite", { ...admin, body: { email: `pending-${subdomain}@people.test` } }, 201);
  const pendingToken = await mailedToken(t, `pending-${subdomain}@people.test`);
  const revoked = await ok(t, "POST", "/users/invite", { ...admin, body: { email: `revoked-${subdomain}@people.test` } }, 201);
  const revokedToken = await mailedToken(t, `revoked-${subdomain}@people.test`);
  await ok(t, "POST", `/users/invitations/${revoked.id}/revoke`, admin, 200);

  // An identity provider (https: created without reaching it), and the admin's identity linked
  // through it, written as a finished link flow would (the round trips are in tests/auth/sign-in-providers/).
  const provider = await ok(
    t,
    "POST",
    "/auth/providers",
    { ...admin, body: { kind: "oidc", name: `${W} SSO`, issuer: `https://login.${word}.example`, client_id: `${word}-client`, client_secret: `${word}-client-secret-value`, allowed_domains: [`${word}.example`], auto_join: true, enabled: true } },
    201,
  );
  const identityId = newId();
  await t.ctx.repos.oidc.linkIdentity(
    { id: identityId, tenant_id: tenantId, user_id: signup.user.id, provider_id: provider.id, issuer: `https://login.${word}.example`, subject: `${word}-subject`, email: signup.email, created_at: t.ctx.now(), last_used_at: null },
    { tenantId, userId: signup.user.id, action: "identity.linked", ip: null, userAgent: null },
  );

  const deals: string[] = [];
  for (const body of [
    { title: `${W} expansion`, account_id: account.id, contact_id: contact.id, assigned_to: joined.user.id, stage: stage.key, notes: `Call the ${word} people`, value: "1200.50" },
    { title: `${W} renewal`, account_id: account.id, stage: "won", value: 99 },
    // The word only in the account's and the contact's names.
    { title: "Plain licence", account_id: account.id, contact_id: contact.id, assigned_to: signup.user.id },
  ]) {
    deals.push((await ok(t, "POST", "/crm/deals", { ...admin, body }, 201)).id);
  }

  const note = await ok(t, "POST", `/crm/deals/${deals[0]}/notes`, { ...admin, body: { body: `Met the ${word} team` } }, 201);
  const view = await ok(t, "POST", "/crm/views", { ...admin, body: { name: `${W} deals`, kind: "table", query: { search: word }, shared: true } }, 201);
  const webhook = await ok(t, "POST", "/webhooks", { ...admin, body: { url: `https://hooks.${word}.example/in`, events: ["*"], description: `${W} sync` } }, 201);
  const webhookTest = await ok(t, "POST", `/webhooks/${webhook.id}/test`, admin, 202);

  // A finished import job, its file naming the word.
  const job = await ok(t, "POST", "/crm/accounts/import", { ...admin, raw: `name\n${W} Imports\n`, headers: { "content-type": "text/csv" } }, 202);
  await finishedJob(t, admin, job.id);

  const signed = async (id: string, email: string, password: string, access: string, refresh: string): Promise<Signed> => ({
    id,
    email,
    password,
    access,
    refresh,
    // The public id, as GET /auth/sessions lists it (the token's sid is a secret only its hash is stored for).
    sessionId: (await sessionIdOf(t, access)),
  });
  return {
    word,
    subdomain,
    tenantId,
    admin: await signed(signup.user.id, signup.email, signup.password, signup.access_token, signup.refresh_token),
    member: await signed(joined.user.id, SHARED_EMAIL, memberPassword, joined.access_token, joined.refresh_token),
    profiles: { admin: profiles.find((p) => p.name === "Administrator")!.id, standard: profiles.find((p) => p.name === "Standard user")!.id },
    stage: { id: stage.id, key: stage.key },
    accountId: account.id,
    contactId: contact.id,
    dealIds: deals,
    noteId: note.id,
    viewId: view.id,
    jobId: job.id,
    webhook: { id: webhook.id, deliveryId: webhookTest.id },
    invitations: { accepted: inv.id, pending: { id: pending.id, token: pendingToken }, revoked: { id: revoked.id, token: revokedToken } },
    oidc: { providerId: provider.id, identityId },
  };
}

/** Builds A ("alpha", word "quokka") and B ("bravo", word "wombat"); about eight password hashes. */
export async function buildWorld(): Promise<World> {
  // The operator's metrics are on, so the attempt on them meets the token check, not a 404.
  const { t, clock } = clockedApp({ env: { SUITE_METRICS_TOKEN: METRICS_TOKEN } });
  const base = await populate(t, "alpha", "quokka");
  const b = await populate(t, "bravo", "wombat");
  const host = { tenant: "alpha" };

  // A refresh token rotated away, past the two-tabs grace window.
  const rotated = base.admin.refresh;
  const pair = await ok(t, "POST", "/auth/refresh", { ...host, body: { refresh_token: rotated } }, 200);
  base.admin.access = pair.access_token;
  base.admin.refresh = pair.refresh_token;
  clock.advance(11_000);

  // 2FA on for A's member, then a challenge left open.
  const setup = await ok(t, "POST", "/auth/2fa/setup", { ...host, token: base.member.access }, 200);
  await ok(t, "POST", "/auth/2fa/confirm", { ...host, token: base.member.access, body: { code: appCode(setup.secret, clock.now()) } }, 200);
  clock.advance(61_000);
  const challenge = await ok(t, "POST", "/auth/login", { ...host, body: { email: SHARED_EMAIL, password: base.member.password } }, 200);
  if (challenge.requires_2fa !== true) throw new Error("expected a 2FA challenge");

  // A magic link for A's admin, waiting unused.
  await ok(t, "POST", "/auth/magic-link", { ...host, body: { email: base.admin.email } }, 202);
  await t.ctx.magicLinks.settled();
  const magicToken = await mailedToken(t, base.admin.email);

  // Every session has been touched at this clock time: B's attempts, made without moving the
  // clock, leave `last_used_at` alone unless they really use a session.
  for (const s of [base.admin, base.member, b.admin, b.member]) await ok(t, "GET", "/auth/me", { token: s.access, tenant: s === b.admin || s === b.member ? "bravo" : "alpha" }, 200);

  // A sign-in flow under way at A's provider, as /start leaves it (a real start would ask the provider for its endpoints).
  const oauthFlow = { state: newTenantToken(base.tenantId), cookie: newSecretToken() };
  noteSecret("oauth state", oauthFlow.state);
  noteSecret("cookie", oauthFlow.cookie);
  await t.ctx.repos.oidc.openFlow({
    state_hash: hashToken(oauthFlow.state),
    tenant_id: base.tenantId,
    provider_id: base.oidc.providerId,
    user_id: null,
    browser_hash: hashToken(oauthFlow.cookie),
    verifier_sealed: "v1.not.used",
    nonce: "a-nonce",
    created_at: clock.now(),
    expires_at: clock.now() + 600_000,
  });

  // A's admin has a passkey; a sign-in answer and a registration answer wait, unused.
  const key = new SoftAuthenticator("http://alpha.localhost:8000");
  const asAdmin = { ...host, token: base.admin.access };
  const created = await ok(t, "POST", "/auth/passkeys/register/verify", { ...asAdmin, body: { response: key.create(await ok(t, "POST", "/auth/passkeys/register/options", asAdmin, 200)) } }, 201);
  const assertion = key.get(await ok(t, "POST", "/auth/passkeys/login/options", host, 200));
  const registration = key.create(await ok(t, "POST", "/auth/passkeys/register/options", asAdmin, 200));
  const passkey = { id: created.id as string, assertion, registration };

  const a: Victim = { ...base, rotatedRefresh: rotated, tempToken: challenge.temp_token, totpSecret: setup.secret, magicToken, oauthFlow, passkey };
  return { t, clock, a, b, code: () => appCode(setup.secret, clock.now()) };
}

/** Tables that hold tenant rows (those with a tenant_id column), found from the schema itself. */
export async function tenantTables(t: TestApp): Promise<string[]> {
  const columns = await tableColumns(t.ctx);
  return Object.keys(columns)
    .filter((n) => columns[n]!.includes("tenant_id"))
    .sort();
}

/** Every row of one tenant, table by table (audit excepted: see the test), in a stable order. */
export async function snapshot(t: TestApp, tenantId: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  out.tenants = (await testSql(t.ctx).all<unknown>("SELECT * FROM tenants WHERE id = ?1", tenantId)).map((r) => JSON.stringify(r));
  for (const table of await tenantTables(t)) {
    if (table === "audit_log") continue;
    out[table] = (await testSql(t.ctx).all<unknown>(`SELECT * FROM ${table} WHERE tenant_id = ?1`, tenantId)).map((r) => JSON.stringify(r)).sort();
  }
  return out;
}

/** Every id of one tenant's rows, with the tenant's own id: none may reach the other tenant. */
export async function idsOf(t: TestApp, tenantId: string): Promise<Set<string>> {
  const ids = new Set<string>([tenantId]);
  const columns = await tableColumns(t.ctx);
  for (const table of await tenantTables(t)) {
    for (const col of ["id", "user_id"]) {
      const has = columns[table]!.includes(col);
      if (!has) continue;
      for (const r of (await testSql(t.ctx).all(`SELECT ${col} AS v FROM ${table} WHERE tenant_id = ?1`, tenantId)) as Array<{ v: unknown }>) {
        if (typeof r.v === "string" && r.v.length >= 8) ids.add(r.v);
      }
    }
  }
  return ids;
}

/** How many rows of `table` a tenant has, optionally narrowed by a WHERE fragment. */
export const countOf = async (t: TestApp, table: string, tenantId: string, where = "TRUE") =>
  (await testSql(t.ctx).get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE tenant_id = ?1 AND (${where})`, tenantId))!.n;
