import { hashToken } from "../../../src/kernel/ids";
import { openMail } from "../../support/outbox";
import { sqliteRepos } from "../../helpers";
import { SignJWT } from "jose";
import { appCode } from "../../auth/two-factor/rfc6238";
import type { FuzzApp } from "./harness";

export const PASSWORD = "correct horse battery";
const API = "/api/v1";

/** The id, token and email pools a generated request names symbolically; read at send time. */
export type Pool =
  | "deal" | "account" | "contact" | "user" | "invitation" | "stage" | "profile" | "session" | "stageId" | "otherStageId"
  | "otherDeal" | "otherAccount" | "otherContact" | "otherUser" | "otherInvitation" | "otherProfile"
  | "email" | "mailToken" | "tempToken" | "adminToken" | "memberToken" | "otherToken" | "refreshToken" | "tamperedToken"
  | "algNone" | "expired" | "foreignKey" | "provider" | "otherProvider" | "identity" | "operatorToken" | "mail";
export const POOLS: Pool[] = [
  "deal", "account", "contact", "user", "invitation", "stage", "profile", "session", "stageId", "otherStageId",
  "otherDeal", "otherAccount", "otherContact", "otherUser", "otherInvitation", "otherProfile",
  "email", "mailToken", "tempToken", "adminToken", "memberToken", "otherToken", "refreshToken", "tamperedToken", "algNone", "expired", "foreignKey",
  "provider", "otherProvider", "identity", "operatorToken", "mail",
];

/**
 * The issuer of the world's identity providers: a loopback port where nothing listens, so that a
 * start or a link reaches "the provider cannot be reached" at once, never the network.
 */
export const DEAD_ISSUER = "http://127.0.0.1:9";

type Json = { status: number; body: any };

/**
 * Two organizations with data: "acme" (admin, member, a member with 2FA on, accounts, contacts,
 * deals, a stage, pending and revoked invitations) and "other" (the same shapes, to borrow ids
 * from). Tokens that a request ends (logout, revoke) are replaced by `keepTokensAlive`.
 */
export async function buildWorld(f: FuzzApp) {
  async function call(method: string, path: string, body?: unknown, token?: string, tenant?: string): Promise<Json> {
    const headers: Record<string, string> = tenant ? { "x-tenant": tenant } : {};
    if (body !== undefined) headers["content-type"] = "application/json";
    if (token) headers.authorization = `Bearer ${token}`;
    const a = (await f.send({ method, target: API + path, headers, body: body === undefined ? undefined : JSON.stringify(body) }))!;
    return { status: a.status, body: a.text ? JSON.parse(a.text) : null };
  }
  async function ok(method: string, path: string, body?: unknown, token?: string) {
    const r = await call(method, path, body, token);
    if (r.status >= 300) throw new Error(`world setup: ${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }
  const mailToken = (email: string) => {
    const row = openMail(f.ctx.keys.encryptionKey, f.ctx.db.query("SELECT id, link FROM mail_outbox WHERE recipient = ?1 ORDER BY created_at DESC, rowid DESC LIMIT 1").get(email) as { id: string; link: string });
    return decodeURIComponent(new URL(row.link).hash.match(/token=([^&]+)/)![1]!);
  };
  const login = async (email: string, tenant: string) => {
    const r = await call("POST", "/auth/login", { email, password: PASSWORD }, undefined, tenant);
    if (r.status !== 200) throw new Error(`world login ${email}@${tenant}: ${r.status}`);
    return r.body as { access_token: string; refresh_token: string; temp_token?: string };
  };

  const acme = await ok("POST", "/auth/signup", { email: "admin@acme.test", password: PASSWORD, tenant_name: "Acme", subdomain: "acme" });
  const other = await ok("POST", "/auth/signup", { email: "admin@other.test", password: PASSWORD, tenant_name: "Other", subdomain: "other" });
  const tokens = { admin: acme.access_token as string, refresh: acme.refresh_token as string, other: other.access_token as string, member: "", temp: "", operator: "" };

  for (const [org, token] of [["acme", tokens.admin], ["other", tokens.other]] as const) {
    const accounts = [];
    for (const name of ["Globex", "Initech", "Umbrella"]) accounts.push(await ok("POST", "/crm/accounts", { name: `${name} ${org}`, domain: `${name}.test`, industry: "Retail" }, token));
    const contacts = [];
    for (const [first, last] of [["Ada", "Lovelace"], ["Alan", "Turing"], ["Grace", null]]) {
      contacts.push(await ok("POST", "/crm/contacts", { first_name: first, last_name: last, email: `${first}@x.test`, account_id: accounts[0].id }, token));
    }
    await ok("POST", "/crm/pipeline-stages", { key: "trial", name: "Trial", color: "#112233", position: 7, probability: 30 }, token);
    for (let i = 0; i < 4; i++) {
      await ok("POST", "/crm/deals", {
        title: `Deal ${i} café 🚀`, account_id: accounts[i % 3].id, contact_id: contacts[i % 3].id, value: `${1000 * (i + 1)}.50`,
        currency: "EUR", stage: i === 3 ? "trial" : "new", notes: "renewal", probability: 10 * i, close_date: "2030-06-30",
      }, token);
    }
    await ok("POST", "/users/invite", { email: `pending@${org}.test` }, token);
    const revoked = await ok("POST", "/users/invite", { email: `revoked@${org}.test` }, token);
    await ok("POST", `/users/invitations/${revoked.id}/revoke`, undefined, token);
  }

  // A member, and a member whose second factor is on (its challenge's temp_token is a pool).
  for (const who of ["member", "twofa"]) {
    await ok("POST", "/users/invite", { email: `${who}@acme.test` }, tokens.admin);
    await ok("POST", "/auth/invitations/accept", { token: mailToken(`${who}@acme.test`), password: PASSWORD, full_name: who }, undefined);
  }
  tokens.member = (await login("member@acme.test", "acme")).access_token;
  const twofa = (await login("twofa@acme.test", "acme")).access_token;
  const setup = await ok("POST", "/auth/2fa/setup", undefined, twofa);
  await ok("POST", "/auth/2fa/confirm", { code: appCode(setup.secret, f.ctx.now()) }, twofa);
  tokens.temp = (await login("twofa@acme.test", "acme")).temp_token!;
  // An identity provider in each organization, and an identity of acme's admin linked through acme's.
  const providerBody = (org: string) => ({ kind: "oidc", name: `${org} SSO`, issuer: DEAD_ISSUER, client_id: `${org}-client`, client_secret: `${org}-client-secret`, allowed_domains: [`${org}.test`], auto_join: true, enabled: true });
  const acmeProvider = await ok("POST", "/auth/providers", providerBody("acme"), tokens.admin);
  await ok("POST", "/auth/providers", providerBody("other"), tokens.other);
  await f.ctx.repos.oidc.linkIdentity(
    { id: crypto.randomUUID(), tenant_id: acme.tenant.id, user_id: acme.user.id, provider_id: acmeProvider.id, issuer: DEAD_ISSUER, subject: "admin-subject", email: "admin@acme.test", created_at: f.ctx.now(), last_used_at: null },
    { tenantId: acme.tenant.id, userId: acme.user.id, action: "identity.linked", ip: null, userAgent: null },
  );
  await ok("POST", "/auth/magic-link", { email: "admin@acme.test" });
  await f.ctx.magicLinks.settled();
  await f.ctx.password.settled();

  // An operator of the console (src/operator), with a session opened straight in the store (the
  // fuzz clock stands still: a TOTP step is accepted once) and a password proof as recent as it.
  const operator = (await f.ctx.operators.create("ops@server.test", "plum kettle orbit 4471")).operator;
  const operatorSession = async () => {
    const token = `op_${crypto.randomUUID().replaceAll("-", "")}${crypto.randomUUID().replaceAll("-", "")}`;
    const now = f.ctx.now();
    await f.ctx.repos.operators.createSession({ id: crypto.randomUUID(), tokenHash: hashToken(token), operatorId: operator.id, createdAt: now, expiresAt: now + 3600_000, ip: null, userAgent: null });
    return token;
  };
  tokens.operator = await operatorSession();

  const tenantIds = { acme: acme.tenant.id as string, other: other.tenant.id as string };
  const claims = JSON.parse(Buffer.from(tokens.admin.split(".")[1]!, "base64url").toString());
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const algNone = `${enc({ alg: "none", typ: "JWT" })}.${tokens.admin.split(".")[1]}.`;
  const secret = new TextEncoder().encode(f.ctx.keys.jwtSecret);
  const nowS = Math.floor(f.ctx.now() / 1000);
  const expired = await new SignJWT({ ...claims, iat: nowS - 7200, exp: nowS - 3600 }).setProtectedHeader({ alg: "HS256", typ: "JWT" }).sign(secret);
  const foreignKey = await new SignJWT(claims).setProtectedHeader({ alg: "HS256", typ: "JWT" }).sign(new TextEncoder().encode("x".repeat(48)));

  const column = (sql: string, ...args: string[]) => (f.ctx.db.query(sql).all(...args) as Record<string, string>[]).map((r) => Object.values(r)[0]!);
  const byTenant = (table: string, tenant: string, col = "id") => column(`SELECT ${col} FROM ${table} WHERE tenant_id = ?1 ORDER BY rowid LIMIT 16`, tenant);

  /** The pool's current values; re-read each time, since requests create and delete rows. */
  function pool(p: Pool): string[] {
    const { acme: a, other: o } = tenantIds;
    switch (p) {
      case "deal": return byTenant("deals", a);
      case "account": return byTenant("accounts", a);
      case "contact": return byTenant("contacts", a);
      case "user": return byTenant("users", a);
      case "invitation": return byTenant("invitations", a);
      case "stage": return byTenant("pipeline_stages", a, "key");
      case "stageId": return byTenant("pipeline_stages", a);
      case "otherStageId": return byTenant("pipeline_stages", o);
      case "profile": return byTenant("profiles", a);
      case "session": return byTenant("sessions", a);
      case "otherDeal": return byTenant("deals", o);
      case "otherAccount": return byTenant("accounts", o);
      case "otherContact": return byTenant("contacts", o);
      case "otherUser": return byTenant("users", o);
      case "otherInvitation": return byTenant("invitations", o);
      case "otherProfile": return byTenant("profiles", o);
      case "email": return column("SELECT email FROM users ORDER BY rowid LIMIT 16");
      case "mailToken":
        return (f.ctx.db.query("SELECT id, link FROM mail_outbox WHERE link IS NOT NULL ORDER BY rowid LIMIT 16").all() as Array<{ id: string; link: string }>)
          .map((r) => openMail(f.ctx.keys.encryptionKey, r).link!)
          .map((l) => decodeURIComponent(new URL(l).hash.slice(7)));
      case "tempToken": return [tokens.temp];
      case "adminToken": return [tokens.admin];
      case "memberToken": return [tokens.member];
      case "otherToken": return [tokens.other];
      case "tamperedToken": return [tokens.admin.slice(0, -2) + (tokens.admin.endsWith("AA") ? "BB" : "AA")];
      case "refreshToken": return [tokens.refresh];
      case "operatorToken": return [tokens.operator];
      // Waiting or failed mail, as the operator console names it.
      case "mail": return column("SELECT id FROM mail_outbox WHERE status IN ('pending', 'failed') ORDER BY rowid LIMIT 16");
      case "algNone": return [algNone];
      case "expired": return [expired];
      case "foreignKey": return [foreignKey];
      // Only providers on the dead issuer: one the fuzz made (google, any https issuer) would send a start to the network.
      case "provider": return column("SELECT id FROM identity_providers WHERE tenant_id = ?1 AND issuer = ?2 ORDER BY created_at, id LIMIT 16", a, DEAD_ISSUER);
      case "otherProvider": return column("SELECT id FROM identity_providers WHERE tenant_id = ?1 AND issuer = ?2 ORDER BY created_at, id LIMIT 16", o, DEAD_ISSUER);
      case "identity": return column("SELECT id FROM user_identities WHERE tenant_id = ?1 ORDER BY created_at, id LIMIT 16", a);
    }
  }

  /**
   * Opens a new session for whoever a request signed out (logout, logout-all, a revoked session).
   * Straight through the service, not HTTP login: under the real limits, logins run out.
   */
  async function keepTokensAlive() {
    const alive = async (t: string) => f.ctx.auth.authenticate(t).then(() => true, () => false);
    // A request may have removed, demoted or promoted one of the cast (DELETE and PATCH /users/{id}):
    // put them back as they were, with the same address and password, before opening a session.
    const cast = [[tenantIds.acme, "admin@acme.test", "admin"], [tenantIds.acme, "member@acme.test", "member"], [tenantIds.other, "admin@other.test", "admin"]] as const;
    for (const [tenantId, email, role] of cast) {
      if (!(await f.ctx.repos.users.byEmail(tenantId, email))) {
        const hash = await f.ctx.hasher.hash(PASSWORD);
        sqliteRepos(f.ctx).users.insertInTx({ id: crypto.randomUUID(), tenant_id: tenantId, email, full_name: null, role, profile_id: null, password_hash: hash, created_at: f.ctx.now() });
      }
      f.ctx.db.run("UPDATE users SET role = ?3 WHERE tenant_id = ?1 AND email = ?2 AND role <> ?3", [tenantId, email, role]);
    }
    const fresh = async (tenantId: string, email: string) => {
      const user = (await f.ctx.repos.users.byEmail(tenantId, email))!;
      return f.ctx.auth.startSession(user, "password", { ip: null, userAgent: null });
    };
    if (!(await alive(tokens.admin))) {
      const r = await fresh(tenantIds.acme, "admin@acme.test");
      tokens.admin = r.access_token;
      tokens.refresh = r.refresh_token;
    }
    if (!(await alive(tokens.member))) tokens.member = (await fresh(tenantIds.acme, "member@acme.test")).access_token;
    if (!(await alive(tokens.other))) tokens.other = (await fresh(tenantIds.other, "admin@other.test")).access_token;
    if (!(await f.ctx.operators.authenticate(tokens.operator).then(() => true, () => false))) tokens.operator = await operatorSession();
  }

  return { tokens, tenantIds, pool, keepTokensAlive };
}

export type World = Awaited<ReturnType<typeof buildWorld>>;
