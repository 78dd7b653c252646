import { expect } from "bun:test";
import { type Attempt, asB, mismatch, notFound, ownPage, req } from "./attempt-kit";
import { countOf, type World } from "./world";
import { testSql } from "../../support/sql";

const providerRow = async (w: World, id: string) => (await testSql(w.t.ctx).get("SELECT tenant_id, name, enabled FROM identity_providers WHERE id = ?1", id)) as { tenant_id: string; name: string; enabled: number } | null;
const CALLBACK = "/auth/oauth/callback";

/** Identity providers, the sign-in flow and linked identities: A's providers, flows and identities from B. */
export const OIDC_ATTEMPTS: Attempt[] = [
  { op: "GET /api/v1/auth/providers", what: "list providers", send: (w) => req("GET", "/auth/providers?size=100", asB(w)), expect: { status: 200 }, check: ownPage("identity_providers") },
  { op: "GET /api/v1/auth/providers", what: "B's member lists providers", send: (w) => req("GET", "/auth/providers", { token: w.b.member.access, tenant: "bravo" }), expect: { status: 403, code: "forbidden" } },
  {
    op: "POST /api/v1/auth/providers",
    what: "add a provider naming A's tenant_id",
    send: (w) =>
      req("POST", "/auth/providers", { ...asB(w), body: { kind: "google", name: "B Google", client_id: "b-google", client_secret: "b-google-client-secret", tenant_id: w.a.tenantId } }),
    expect: { status: 201 },
    check: async (b, w) => expect((await providerRow(w, b.id))?.tenant_id).toBe(w.b.tenantId),
    tenantIdInBody: true,
  },
  {
    op: "POST /api/v1/auth/providers",
    what: "add a provider with A's provider's name and A's profile as default",
    send: (w) => req("POST", "/auth/providers", { ...asB(w), body: { kind: "github", name: "Quokka SSO", client_id: "x", client_secret: "x-secret-value", default_profile_id: w.a.profiles.standard } }),
    expect: notFound,
  },
  {
    op: "PATCH /api/v1/auth/providers/{id}",
    what: "turn A's provider off",
    send: (w) => req("PATCH", `/auth/providers/${w.a.oidc.providerId}`, { ...asB(w), body: { enabled: false } }),
    expect: notFound,
    check: async (_b, w) => expect((await providerRow(w, w.a.oidc.providerId))?.enabled).toBe(1),
  },
  {
    op: "PATCH /api/v1/auth/providers/{id}",
    what: "rename B's provider naming A's tenant_id and A's profile",
    send: (w) => req("PATCH", `/auth/providers/${w.b.oidc.providerId}`, { ...asB(w), body: { default_profile_id: w.a.profiles.admin, tenant_id: w.a.tenantId } }),
    expect: notFound,
  },
  {
    op: "PATCH /api/v1/auth/providers/{id}",
    what: "rename B's provider naming A's tenant_id",
    send: (w) => req("PATCH", `/auth/providers/${w.b.oidc.providerId}`, { ...asB(w), body: { name: "Wombat SSO 2", tenant_id: w.a.tenantId } }),
    expect: { status: 200 },
    check: async (_b, w) => expect(await providerRow(w, w.b.oidc.providerId)).toMatchObject({ tenant_id: w.b.tenantId, name: "Wombat SSO 2" }),
    tenantIdInBody: true,
  },
  { op: "DELETE /api/v1/auth/providers/{id}", what: "delete A's provider", send: (w) => req("DELETE", `/auth/providers/${w.a.oidc.providerId}`, asB(w)), expect: notFound },
  {
    op: "GET /api/v1/auth/providers/public",
    what: "B's sign-in page lists only B's providers",
    send: (w) => req("GET", "/auth/providers/public", { tenant: "bravo" }),
    expect: { status: 200 },
    check: ownPage("identity_providers", "enabled = 1"),
  },
  {
    op: "GET /api/v1/auth/oauth/{provider_id}/start",
    what: "start at A's provider on B's host",
    send: (w) => req("GET", `/auth/oauth/${w.a.oidc.providerId}/start`, { tenant: "bravo" }),
    expect: { status: 302 },
    check: async (_b, w) => expect(await countOf(w.t, "oauth_flows", w.b.tenantId)).toBe(0),
  },
  {
    op: "GET /api/v1/auth/oauth/callback",
    what: "A's flow (state and cookie) finished on B's host",
    send: (w) => req("GET", `${CALLBACK}?state=${w.a.oauthFlow.state}&code=x`, { tenant: "bravo", cookies: { svc_oauth: w.a.oauthFlow.cookie } }),
    expect: { status: 302 },
  },
  {
    op: "GET /api/v1/auth/oauth/callback",
    what: "A's state with B's token, on A's host, without A's cookie",
    send: (w) => req("GET", `${CALLBACK}?state=${w.a.oauthFlow.state}&code=x`, { tenant: "alpha", token: w.b.admin.access }),
    expect: { status: 302 },
  },
  {
    op: "POST /api/v1/auth/identities/link/{provider_id}",
    what: "link through A's provider",
    send: (w) => req("POST", `/auth/identities/link/${w.a.oidc.providerId}`, { ...asB(w), body: {} }),
    expect: notFound,
  },
  {
    op: "POST /api/v1/auth/identities/link/{provider_id}",
    what: "B's token on A's host",
    send: (w) => req("POST", `/auth/identities/link/${w.a.oidc.providerId}`, { token: w.b.admin.access, tenant: "alpha", body: {} }),
    expect: mismatch,
  },
  {
    op: "GET /api/v1/auth/identities",
    what: "B's admin's identities",
    send: (w) => req("GET", "/auth/identities?size=100", asB(w)),
    expect: { status: 200 },
    check: ownPage("user_identities", (w) => `user_id = '${w.b.admin.id}'`),
  },
  { op: "DELETE /api/v1/auth/identities/{id}", what: "unlink A's admin's identity", send: (w) => req("DELETE", `/auth/identities/${w.a.oidc.identityId}`, asB(w)), expect: notFound },
];
