import { expect } from "bun:test";
import { SORT_FIELDS } from "../../../src/crm/model";
import { claimsOf } from "../../auth/support";
import { type RequestOptions, browserHeaders } from "../../helpers";
import { countOf, mailedToken, type World } from "./world";

/**
 * The table of cross-tenant attempts: tenant B (its admin, or its member where the role
 * matters) reaching for tenant A's ids, subdomain and credentials, one row per attempt, keyed by
 * the OpenAPI operation it exercises. The test checks that every operation that takes an id,
 * lists rows or writes rows has rows here; the runner checks each answer's status and code, that
 * no answer shows anything of A the request did not itself send, and that lists hold no A rows.
 */

export interface Sent {
  method: string;
  path: string;
  o: RequestOptions;
}

export interface Attempt {
  /** "METHOD /api/v1/path/{param}", as the OpenAPI document names the operation. */
  op: string;
  what: string;
  send: (w: World) => Sent | Promise<Sent>;
  /** The contract's answer: status and `code` (or, for 422, the first item's `type`). */
  expect: { status: number; code?: string; type?: string };
  /** Further checks on the parsed body: lists hold only B's rows and count only B's. */
  check?: (body: any, w: World) => void | Promise<void>;
  /** The body names A's tenant id, which must be ignored. */
  tenantIdInBody?: boolean;
}

const API = "/api/v1";
const PW = "correct horse battery";

/** B's admin on B's host; `extra` overrides. */
const asB = (w: World, extra: RequestOptions = {}): RequestOptions => ({ token: w.b.admin.access, tenant: "bravo", ...extra });
const req = (method: string, path: string, o: RequestOptions): Sent => ({ method, path: `${API}${path}`, o });

const notFound = { status: 404, code: "not_found" };
const mismatch = { status: 403, code: "tenant_mismatch" };

/** A page or array of B's rows only: every id is B's, and the total is B's count. */
const ownPage = (table: string, where: string | ((w: World) => string) = "1") => (body: any, w: World) => {
  const cond = typeof where === "function" ? where(w) : where;
  const items: Array<{ id: string; tenant_id?: string }> = Array.isArray(body) ? body : body.items;
  const bIds = new Set((w.t.ctx.db.query(`SELECT id FROM ${table} WHERE tenant_id = ?1 AND (${cond})`).all(w.b.tenantId) as Array<{ id: string }>).map((r) => r.id));
  expect(items.filter((i) => !bIds.has(i.id)).map((i) => i.id)).toEqual([]);
  for (const i of items) if ("tenant_id" in i) expect(i.tenant_id).toBe(w.b.tenantId);
  const n = countOf(w.t, table, w.b.tenantId, cond);
  if (Array.isArray(body)) expect(items.length).toBe(n);
  else expect({ total: body.total, pages: body.pages }).toEqual({ total: n, pages: Math.ceil(n / body.size) });
};

/** A page that must be empty: a search or filter naming only A's data. */
const emptyPage = (body: any) => expect({ items: body.items, total: body.total, pages: body.pages }).toEqual({ items: [], total: 0, pages: 0 });

/** A created or updated row that landed in B (or the new tenant), never in A. */
const landedInB = (body: any, w: World) => expect(body.tenant_id).toBe(w.b.tenantId);

const INVITATION_STATUS: Record<string, (now: number) => string> = {
  pending: (now) => `accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ${now}`,
  accepted: () => "accepted_at IS NOT NULL",
  revoked: () => "accepted_at IS NULL AND revoked_at IS NOT NULL",
};

const A_SEARCHES = ["quokka", "Quokka Corp", "QUOKKA PERSON", "the quokka people", "qu", "alpha", "quokka-stage"];

export const ATTEMPTS: Attempt[] = [
  // ---- signup and sign-in: A's subdomain, A's accounts, A's tenant id ----
  {
    op: "POST /api/v1/auth/signup",
    what: "signup naming A's tenant_id makes a new tenant",
    send: (w) => req("POST", "/auth/signup", { body: { email: "founder@charlie.test", password: PW, tenant_name: "Charlie", subdomain: "charlie", tenant_id: w.a.tenantId } }),
    expect: { status: 201 },
    check: (b, w) => {
      expect(b.tenant.id).not.toBe(w.a.tenantId);
      expect(b.user.tenant_id).toBe(b.tenant.id);
    },
    tenantIdInBody: true,
  },
  {
    op: "POST /api/v1/auth/signup",
    what: "signup for A's subdomain",
    send: () => req("POST", "/auth/signup", { body: { email: "thief@people.test", password: PW, tenant_name: "Thief", subdomain: "alpha" } }),
    expect: { status: 409, code: "subdomain_taken" },
  },
  ...[{ tenant: "bravo" }, { headers: { "x-tenant": "bravo" } }].map(
    (where): Attempt => ({
      op: "POST /api/v1/auth/login",
      what: `A's admin email and password on B (${Object.keys(where)[0]})`,
      send: (w) => req("POST", "/auth/login", { ...where, body: { email: w.a.admin.email, password: w.a.admin.password } }),
      expect: { status: 401, code: "invalid_credentials" },
    }),
  ),
  {
    op: "POST /api/v1/auth/login",
    what: "B's admin credentials on A's host",
    send: (w) => req("POST", "/auth/login", { tenant: "alpha", body: { email: w.b.admin.email, password: w.b.admin.password } }),
    expect: { status: 401, code: "invalid_credentials" },
  },
  {
    op: "POST /api/v1/auth/login",
    what: "the shared address with A's member password on B's host",
    send: (w) => req("POST", "/auth/login", { tenant: "bravo", body: { email: w.a.member.email, password: w.a.member.password } }),
    expect: { status: 401, code: "invalid_credentials" },
  },
  {
    op: "POST /api/v1/auth/login",
    what: "the shared address with B's member password, no tenant named: ambiguous, not A",
    send: (w) => req("POST", "/auth/login", { body: { email: w.b.member.email, password: w.b.member.password } }),
    expect: { status: 400, code: "tenant_required" },
  },
  {
    op: "POST /api/v1/auth/login",
    what: "B's admin login naming A's tenant_id signs in to B",
    send: (w) => req("POST", "/auth/login", { tenant: "bravo", body: { email: w.b.admin.email, password: w.b.admin.password, tenant_id: w.a.tenantId } }),
    expect: { status: 200 },
    check: (b, w) => expect(claimsOf(b.access_token).tid).toBe(w.b.tenantId),
    tenantIdInBody: true,
  },
  ...(
    [
      ["A's refresh token on B's host", (w: World) => ({ tenant: "bravo", body: { refresh_token: w.a.admin.refresh } })],
      ["A's refresh token with X-Tenant: bravo", (w: World) => ({ headers: { "x-tenant": "bravo" }, body: { refresh_token: w.a.admin.refresh } })],
      ["A's rotated refresh token on B's host (no reuse detection fires)", (w: World) => ({ tenant: "bravo", body: { refresh_token: w.a.rotatedRefresh } })],
      ["A's member's refresh token on B's host", (w: World) => ({ tenant: "bravo", body: { refresh_token: w.a.member.refresh } })],
      [
        "A's svc_refresh cookie on B's host",
        (w: World) => ({ tenant: "bravo", cookies: { svc_refresh: w.a.admin.refresh }, headers: browserHeaders("http://bravo.localhost:8000") }),
      ],
    ] as const
  ).map(([what, o]): Attempt => ({ op: "POST /api/v1/auth/refresh", what, send: (w) => req("POST", "/auth/refresh", o(w)), expect: mismatch })),
  ...[{ tenant: "bravo" }, { headers: { "x-tenant": "bravo" } }].map(
    (where): Attempt => ({
      op: "POST /api/v1/auth/2fa/verify",
      what: `A's temp_token with a valid code on B (${Object.keys(where)[0]})`,
      send: (w) => req("POST", "/auth/2fa/verify", { ...where, body: { temp_token: w.a.tempToken, code: w.code() } }),
      expect: mismatch,
    }),
  ),
  {
    op: "POST /api/v1/auth/magic-link",
    what: "a link for A's admin asked on B's host, naming A's tenant_id: no mail",
    send: (w) => req("POST", "/auth/magic-link", { tenant: "bravo", body: { email: w.a.admin.email, tenant_id: w.a.tenantId } }),
    expect: { status: 202 },
    check: async (_b, w) => {
      await w.t.ctx.magicLinks.settled();
      expect(countOf(w.t, "magic_links", w.b.tenantId)).toBe(0);
      expect(countOf(w.t, "mail_outbox", w.b.tenantId, `recipient = '${w.a.admin.email}'`)).toBe(0);
    },
    tenantIdInBody: true,
  },
  {
    op: "POST /api/v1/auth/magic-link",
    what: "a link for the address both tenants share, asked on B's host, goes to B's member only",
    send: (w) => req("POST", "/auth/magic-link", { tenant: "bravo", body: { email: w.b.member.email } }),
    expect: { status: 202 },
    check: async (_b, w) => {
      await w.t.ctx.magicLinks.settled();
      expect(countOf(w.t, "magic_links", w.b.tenantId, `user_id = '${w.b.member.id}'`)).toBe(1);
    },
  },
  ...[{ tenant: "bravo" }, { headers: { "x-tenant": "bravo" } }].map(
    (where): Attempt => ({
      op: "POST /api/v1/auth/magic-verify",
      what: `A's magic-link token on B (${Object.keys(where)[0]})`,
      send: (w) => req("POST", "/auth/magic-verify", { ...where, body: { token: w.a.magicToken } }),
      expect: mismatch,
    }),
  ),
  ...[{ tenant: "bravo" }, { headers: { "x-tenant": "bravo" } }].map(
    (where): Attempt => ({
      op: "POST /api/v1/auth/invitations/accept",
      what: `A's pending invitation token on B (${Object.keys(where)[0]})`,
      send: (w) => req("POST", "/auth/invitations/accept", { ...where, body: { token: w.a.invitations.pending.token, password: PW } }),
      expect: mismatch,
    }),
  ),
  {
    op: "POST /api/v1/auth/invitations/accept",
    what: "A's revoked invitation token on B's host",
    send: (w) => req("POST", "/auth/invitations/accept", { tenant: "bravo", body: { token: w.a.invitations.revoked.token, password: PW } }),
    expect: { status: 400, code: "invitation_invalid" },
  },
  {
    op: "POST /api/v1/auth/invitations/accept",
    what: "accepting B's invitation with A's tenant_id joins B",
    send: async (w) => {
      const r = await w.t.json("POST", `${API}/users/invite`, { ...asB(w), body: { email: "joiner@people.test" } });
      expect(r.status).toBe(201);
      return req("POST", "/auth/invitations/accept", { body: { token: mailedToken(w.t, "joiner@people.test"), password: PW, tenant_id: w.a.tenantId } });
    },
    expect: { status: 201 },
    check: (b, w) => {
      expect(b.user.tenant_id).toBe(w.b.tenantId);
      expect(b.tenant.id).toBe(w.b.tenantId);
    },
    tenantIdInBody: true,
  },

  // ---- sessions ----
  { op: "GET /api/v1/auth/sessions", what: "B's admin lists sessions", send: (w) => req("GET", "/auth/sessions", asB(w)), expect: { status: 200 }, check: ownPage("sessions", (w) => `user_id = '${w.b.admin.id}' AND revoked_at IS NULL AND expires_at > ${w.t.ctx.now()}`) },
  ...(["admin", "member"] as const).map(
    (who): Attempt => ({
      op: "POST /api/v1/auth/sessions/revoke",
      what: `revoke A's ${who}'s session`,
      send: (w) => req("POST", "/auth/sessions/revoke", { ...asB(w), body: { session_id: w.a[who].sessionId } }),
      expect: notFound,
    }),
  ),

  // ---- the team ----
  ...(
    [
      ["A's profile_id", (w: World) => ({ profile_id: w.a.profiles.standard })],
      ["A's role_id", (w: World) => ({ role_id: w.a.profiles.admin })],
    ] as const
  ).map(([what, body]): Attempt => ({ op: "POST /api/v1/users/invite", what: `invite with ${what}`, send: (w) => req("POST", "/users/invite", { ...asB(w), body: { email: "new1@people.test", ...body(w) } }), expect: notFound })),
  {
    op: "POST /api/v1/users/invite",
    what: "invite naming A's tenant_id lands in B",
    send: (w) => req("POST", "/users/invite", { ...asB(w), body: { email: "new2@people.test", tenant_id: w.a.tenantId } }),
    expect: { status: 201 },
    check: (b, w) => expect(countOf(w.t, "invitations", w.b.tenantId, `id = '${b.id}'`)).toBe(1),
    tenantIdInBody: true,
  },
  {
    op: "POST /api/v1/users/invite",
    what: "inviting an address A has a pending invitation for is a first invite in B, not A's resend",
    send: (w) => req("POST", "/users/invite", { ...asB(w), body: { email: "pending-alpha@people.test" } }),
    expect: { status: 201 },
    check: (b, w) => {
      expect(b.id).not.toBe(w.a.invitations.pending.id);
      expect(countOf(w.t, "invitations", w.b.tenantId, `id = '${b.id}'`)).toBe(1);
    },
  },
  {
    op: "POST /api/v1/users/invite",
    what: "B's member invites with A's profile_id",
    send: (w) => req("POST", "/users/invite", { token: w.b.member.access, tenant: "bravo", body: { email: "new3@people.test", profile_id: w.a.profiles.standard } }),
    expect: { status: 403, code: "forbidden" },
  },
  {
    op: "POST /api/v1/users/invite",
    what: "inviting A's admin's address is a first invite in B, not a 409",
    send: (w) => req("POST", "/users/invite", { ...asB(w), body: { email: w.a.admin.email } }),
    expect: { status: 201 },
    check: (b, w) => expect(b.profile_id).toBe(w.b.profiles.standard),
  },
  { op: "GET /api/v1/users/invitations", what: "list invitations", send: (w) => req("GET", "/users/invitations?size=100", asB(w)), expect: { status: 200 }, check: ownPage("invitations") },
  ...Object.entries(INVITATION_STATUS).map(
    ([status, where]): Attempt => ({
      op: "GET /api/v1/users/invitations",
      what: `list ${status} invitations`,
      send: (w) => req("GET", `/users/invitations?size=100&status=${status}`, asB(w)),
      expect: { status: 200 },
      check: ownPage("invitations", (w) => where(w.t.ctx.now())),
    }),
  ),
  ...(["pending", "revoked", "accepted"] as const).map(
    (kind): Attempt => ({
      op: "POST /api/v1/users/invitations/{id}/revoke",
      what: `revoke A's ${kind} invitation`,
      send: (w) => req("POST", `/users/invitations/${kind === "accepted" ? w.a.invitations.accepted : w.a.invitations[kind].id}/revoke`, asB(w)),
      expect: notFound,
    }),
  ),
  {
    op: "POST /api/v1/users/invitations/{id}/revoke",
    what: "B's member revokes A's pending invitation",
    send: (w) => req("POST", `/users/invitations/${w.a.invitations.pending.id}/revoke`, { token: w.b.member.access, tenant: "bravo" }),
    expect: { status: 403, code: "forbidden" },
  },
  { op: "GET /api/v1/users", what: "B's member lists members", send: (w) => req("GET", "/users", { token: w.b.member.access, tenant: "bravo" }), expect: { status: 403, code: "forbidden" } },
  { op: "GET /api/v1/users", what: "list members", send: (w) => req("GET", "/users?size=100", asB(w)), expect: { status: 200 }, check: ownPage("users") },
  ...["quokka", "alpha.test", "Founder"].map(
    (search): Attempt => ({
      op: "GET /api/v1/users",
      what: `search members for "${search}"`,
      send: (w) => req("GET", `/users?search=${encodeURIComponent(search)}`, asB(w)),
      expect: { status: 200 },
      check: search === "Founder" ? (b, w) => expect(b.items.map((u: { id: string }) => u.id)).toEqual([w.b.admin.id]) : emptyPage,
    }),
  ),
  {
    op: "GET /api/v1/users",
    what: "the address both tenants share finds only B's member",
    send: (w) => req("GET", "/users?search=shared", asB(w)),
    expect: { status: 200 },
    check: (b, w) => expect({ ids: b.items.map((u: { id: string }) => u.id), total: b.total }).toEqual({ ids: [w.b.member.id], total: 1 }),
  },
  ...(["admin", "member"] as const).map(
    (who): Attempt => ({
      op: "PATCH /api/v1/users/{id}",
      what: `B's admin renames A's ${who}`,
      send: (w) => req("PATCH", `/users/${w.a[who].id}`, { ...asB(w), body: { full_name: "Renamed by B" } }),
      expect: notFound,
    }),
  ),
  {
    op: "PATCH /api/v1/users/{id}",
    what: "B's member renames A's admin",
    send: (w) => req("PATCH", `/users/${w.a.admin.id}`, { token: w.b.member.access, tenant: "bravo", body: { full_name: "Renamed by B" } }),
    expect: { status: 403, code: "forbidden" },
  },
  {
    op: "PATCH /api/v1/users/{id}",
    what: "rename naming A's tenant_id stays in B",
    send: (w) => req("PATCH", `/users/${w.b.member.id}`, { ...asB(w), body: { full_name: "Wombat Renamed", tenant_id: w.a.tenantId } }),
    expect: { status: 200 },
    check: landedInB,
    tenantIdInBody: true,
  },

  // ---- CRM: stages ----
  { op: "GET /api/v1/crm/pipeline-stages", what: "list stages", send: (w) => req("GET", "/crm/pipeline-stages", asB(w)), expect: { status: 200 }, check: ownPage("pipeline_stages") },

  // ---- CRM: deals ----
  { op: "GET /api/v1/crm/deals", what: "list deals", send: (w) => req("GET", "/crm/deals?size=100", asB(w)), expect: { status: 200 }, check: ownPage("deals") },
  { op: "GET /api/v1/crm/deals", what: "list deals, no tenant named", send: (w) => req("GET", "/crm/deals?size=100", { token: w.b.admin.access }), expect: { status: 200 }, check: ownPage("deals") },
  { op: "GET /api/v1/crm/deals", what: "B's member lists deals", send: (w) => req("GET", "/crm/deals?size=100", { token: w.b.member.access, tenant: "bravo" }), expect: { status: 200 }, check: ownPage("deals") },
  { op: "GET /api/v1/crm/deals", what: "mine=true", send: (w) => req("GET", "/crm/deals?mine=true", asB(w)), expect: { status: 200 }, check: ownPage("deals", (w) => `assigned_to = '${w.b.admin.id}'`) },
  ...A_SEARCHES.map(
    (search): Attempt => ({
      op: "GET /api/v1/crm/deals",
      what: `search deals for "${search}"`,
      send: (w) => req("GET", `/crm/deals?search=${encodeURIComponent(search)}`, asB(w)),
      expect: { status: 200 },
      check: emptyPage,
    }),
  ),
  ...(["admin", "member"] as const).map(
    (who): Attempt => ({
      op: "GET /api/v1/crm/deals",
      what: `assigned_to = A's ${who}`,
      send: (w) => req("GET", `/crm/deals?assigned_to=${w.a[who].id}`, asB(w)),
      expect: { status: 200 },
      check: emptyPage,
    }),
  ),
  { op: "GET /api/v1/crm/deals", what: "stage = A's own stage key", send: (w) => req("GET", `/crm/deals?stage=${w.a.stage.key}`, asB(w)), expect: { status: 200 }, check: emptyPage },
  ...SORT_FIELDS.flatMap((field) =>
    (["asc", "desc"] as const).map(
      (dir): Attempt => ({
        op: "GET /api/v1/crm/deals",
        what: `sorted by ${field} ${dir}`,
        send: (w) => req("GET", `/crm/deals?size=100&sort_by=${field}&sort_dir=${dir}`, asB(w)),
        expect: { status: 200 },
        check: ownPage("deals"),
      }),
    ),
  ),
  ...(
    [
      ["A's account_id", (w: World) => ({ account_id: w.a.accountId }), notFound],
      ["A's contact_id", (w: World) => ({ account_id: w.b.accountId, contact_id: w.a.contactId }), notFound],
      ["A's member as assigned_to", (w: World) => ({ account_id: w.b.accountId, assigned_to: w.a.member.id }), notFound],
      ["A's stage key", (w: World) => ({ account_id: w.b.accountId, stage: w.a.stage.key }), { status: 422, type: "literal_error" }],
    ] as const
  ).map(([what, body, expected]): Attempt => ({ op: "POST /api/v1/crm/deals", what: `create a deal with ${what}`, send: (w) => req("POST", "/crm/deals", { ...asB(w), body: { title: "Wombat x", ...body(w) } }), expect: expected })),
  {
    op: "POST /api/v1/crm/deals",
    what: "create a deal naming A's tenant_id and a deal id of A",
    send: (w) => req("POST", "/crm/deals", { ...asB(w), body: { title: "Wombat planted", account_id: w.b.accountId, tenant_id: w.a.tenantId, id: w.a.dealIds[0] } }),
    expect: { status: 201 },
    check: (b, w) => {
      landedInB(b, w);
      expect(b.id).not.toBe(w.a.dealIds[0]);
    },
    tenantIdInBody: true,
  },
  ...[0, 1, 2].flatMap((i): Attempt[] => [
    { op: "GET /api/v1/crm/deals/{id}", what: `read A's deal ${i}`, send: (w) => req("GET", `/crm/deals/${w.a.dealIds[i]}`, asB(w)), expect: notFound },
    { op: "GET /api/v1/crm/deals/{id}", what: `B's member reads A's deal ${i}`, send: (w) => req("GET", `/crm/deals/${w.a.dealIds[i]}`, { token: w.b.member.access }), expect: notFound },
    { op: "PATCH /api/v1/crm/deals/{id}", what: `change A's deal ${i}`, send: (w) => req("PATCH", `/crm/deals/${w.a.dealIds[i]}`, { ...asB(w), body: { title: "Hijacked", account_id: w.b.accountId } }), expect: notFound },
    { op: "DELETE /api/v1/crm/deals/{id}", what: `delete A's deal ${i}`, send: (w) => req("DELETE", `/crm/deals/${w.a.dealIds[i]}`, asB(w)), expect: notFound },
  ]),
  { op: "PATCH /api/v1/crm/deals/{id}", what: "an empty change of A's deal", send: (w) => req("PATCH", `/crm/deals/${w.a.dealIds[0]}`, { ...asB(w), body: {} }), expect: notFound },
  ...(
    [
      ["A's account_id", (w: World) => ({ account_id: w.a.accountId }), notFound],
      ["A's contact_id", (w: World) => ({ contact_id: w.a.contactId }), notFound],
      ["A's member as assigned_to", (w: World) => ({ assigned_to: w.a.member.id }), notFound],
      ["A's stage key", (w: World) => ({ stage: w.a.stage.key }), { status: 422, type: "literal_error" }],
    ] as const
  ).map(([what, body, expected]): Attempt => ({ op: "PATCH /api/v1/crm/deals/{id}", what: `move B's deal to ${what}`, send: (w) => req("PATCH", `/crm/deals/${w.b.dealIds[0]}`, { ...asB(w), body: body(w) }), expect: expected })),
  {
    op: "PATCH /api/v1/crm/deals/{id}",
    what: "change B's deal naming A's tenant_id",
    send: (w) => req("PATCH", `/crm/deals/${w.b.dealIds[1]}`, { ...asB(w), body: { notes: "still wombat", tenant_id: w.a.tenantId } }),
    expect: { status: 200 },
    check: landedInB,
    tenantIdInBody: true,
  },

  // ---- CRM: accounts and contacts ----
  ...(["accounts", "contacts"] as const).flatMap((kind): Attempt[] => {
    const table = kind;
    const idOf = (w: World, t: "a" | "b") => (kind === "accounts" ? w[t].accountId : w[t].contactId);
    const create = (w: World) => (kind === "accounts" ? { name: "Wombat Two" } : { first_name: "Wombat", last_name: "Two" });
    return [
      { op: `GET /api/v1/crm/${kind}`, what: `list ${kind}`, send: (w) => req("GET", `/crm/${kind}?size=100`, asB(w)), expect: { status: 200 }, check: ownPage(table) },
      ...["quokka", "qu", "quokka.example", "quokka@contact"].map(
        (search): Attempt => ({
          op: `GET /api/v1/crm/${kind}`,
          what: `search ${kind} for "${search}"`,
          send: (w) => req("GET", `/crm/${kind}?search=${encodeURIComponent(search)}`, asB(w)),
          expect: { status: 200 },
          check: emptyPage,
        }),
      ),
      {
        op: `POST /api/v1/crm/${kind}`,
        what: `create naming A's tenant_id and A's id`,
        send: (w) => req("POST", `/crm/${kind}`, { ...asB(w), body: { ...create(w), tenant_id: w.a.tenantId, id: idOf(w, "a") } }),
        expect: { status: 201 },
        check: (b, w) => {
          landedInB(b, w);
          expect(b.id).not.toBe(idOf(w, "a"));
        },
        tenantIdInBody: true,
      },
      { op: `GET /api/v1/crm/${kind}/{id}`, what: `read A's ${kind}`, send: (w) => req("GET", `/crm/${kind}/${idOf(w, "a")}`, asB(w)), expect: notFound },
      { op: `PATCH /api/v1/crm/${kind}/{id}`, what: `change A's ${kind}`, send: (w) => req("PATCH", `/crm/${kind}/${idOf(w, "a")}`, { ...asB(w), body: create(w) }), expect: notFound },
      { op: `DELETE /api/v1/crm/${kind}/{id}`, what: `delete A's ${kind}`, send: (w) => req("DELETE", `/crm/${kind}/${idOf(w, "a")}`, asB(w)), expect: notFound },
      {
        op: `PATCH /api/v1/crm/${kind}/{id}`,
        what: `rename B's ${kind} (its deals follow) naming A's tenant_id`,
        send: (w) => req("PATCH", `/crm/${kind}/${idOf(w, "b")}`, { ...asB(w), body: { ...(kind === "accounts" ? { name: "Wombat Corp 2" } : { last_name: "Persona" }), tenant_id: w.a.tenantId } }),
        expect: { status: 200 },
        check: landedInB,
        tenantIdInBody: true,
      },
    ];
  }),
  {
    op: "POST /api/v1/crm/contacts",
    what: "create a contact at A's account",
    send: (w) => req("POST", "/crm/contacts", { ...asB(w), body: { first_name: "Wombat", account_id: w.a.accountId } }),
    expect: notFound,
  },
  {
    op: "PATCH /api/v1/crm/contacts/{id}",
    what: "move B's contact to A's account",
    send: (w) => req("PATCH", `/crm/contacts/${w.b.contactId}`, { ...asB(w), body: { account_id: w.a.accountId } }),
    expect: notFound,
  },

  // Last, because it gives B a stage whose key carries A's word: stage keys are per tenant, so
  // A's key is free in B, and A's tenant_id is ignored.
  {
    op: "POST /api/v1/crm/pipeline-stages",
    what: "create a stage with A's key, naming A's tenant_id",
    send: (w) => req("POST", "/crm/pipeline-stages", { ...asB(w), body: { key: w.a.stage.key, name: "Copied", tenant_id: w.a.tenantId } }),
    expect: { status: 201 },
    check: (b, w) => {
      landedInB(b, w);
      expect(b.id).not.toBe(w.a.stage.id);
    },
    tenantIdInBody: true,
  },
];
