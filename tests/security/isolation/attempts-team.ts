import { expect } from "bun:test";
import { type Attempt, asB, req, notFound, ownPage, emptyPage, landedInB, INVITATION_STATUS } from "./attempt-kit";
import { countOf, type World } from "./world";

/** The team: invitations, members and renames across tenants. */
export const TEAM_ATTEMPTS: Attempt[] = [
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
    check: async (b, w) => expect(await countOf(w.t, "invitations", w.b.tenantId, `id = '${b.id}'`)).toBe(1),
    tenantIdInBody: true,
  },
  {
    op: "POST /api/v1/users/invite",
    what: "inviting an address A has a pending invitation for is a first invite in B, not A's resend",
    send: (w) => req("POST", "/users/invite", { ...asB(w), body: { email: "pending-alpha@people.test" } }),
    expect: { status: 201 },
    check: async (b, w) => {
      expect(b.id).not.toBe(w.a.invitations.pending.id);
      expect(await countOf(w.t, "invitations", w.b.tenantId, `id = '${b.id}'`)).toBe(1);
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
  ...(["pending", "revoked", "accepted"] as const).map(
    (kind): Attempt => ({
      op: "POST /api/v1/users/invitations/{id}/link",
      what: `copy the link of A's ${kind} invitation`,
      send: (w) => req("POST", `/users/invitations/${kind === "accepted" ? w.a.invitations.accepted : w.a.invitations[kind].id}/link`, asB(w)),
      expect: notFound,
    }),
  ),
  {
    op: "POST /api/v1/users/invitations/{id}/link",
    what: "B's member copies the link of A's pending invitation",
    send: (w) => req("POST", `/users/invitations/${w.a.invitations.pending.id}/link`, { token: w.b.member.access, tenant: "bravo" }),
    expect: { status: 403, code: "forbidden" },
  },
  {
    op: "GET /api/v1/users/profiles",
    what: "list profiles: only B's",
    send: (w) => req("GET", "/users/profiles", asB(w)),
    expect: { status: 200 },
    check: (b, w) => expect(b.map((p: { id: string }) => p.id).sort()).toEqual([w.b.profiles.admin, w.b.profiles.standard].sort()),
  },
  { op: "GET /api/v1/users/profiles", what: "B's member lists profiles", send: (w) => req("GET", "/users/profiles", { token: w.b.member.access, tenant: "bravo" }), expect: { status: 403, code: "forbidden" } },
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
  // ---- members managed by admins (issue 16) ----
  ...(
    [
      ["promotes A's member", (w: World) => ({ role: "admin" })],
      ["demotes A's admin", (w: World) => ({ role: "member" })],
      ["gives A's member A's admin profile", (w: World) => ({ profile_id: w.a.profiles.admin })],
    ] as const
  ).map(([what, body]): Attempt => ({
    op: "PATCH /api/v1/users/{id}",
    what: `B's admin ${what}`,
    send: (w) => req("PATCH", `/users/${what.includes("A's admin") && !what.includes("profile") ? w.a.admin.id : w.a.member.id}`, { ...asB(w), body: body(w) }),
    expect: notFound,
  })),
  {
    op: "PATCH /api/v1/users/{id}",
    what: "B's admin gives B's member A's profile",
    send: (w) => req("PATCH", `/users/${w.b.member.id}`, { ...asB(w), body: { profile_id: w.a.profiles.standard } }),
    expect: notFound,
    check: async (_b, w) => expect((await w.t.ctx.repos.users.byId(w.b.tenantId, w.b.member.id))!.profile_id).not.toBe(w.a.profiles.standard),
  },
  {
    op: "PATCH /api/v1/users/{id}",
    what: "B's member makes themself admin",
    send: (w) => req("PATCH", `/users/${w.b.member.id}`, { token: w.b.member.access, tenant: "bravo", body: { role: "admin" } }),
    expect: { status: 403, code: "forbidden" },
  },
  ...(["admin", "member"] as const).map(
    (who): Attempt => ({ op: "DELETE /api/v1/users/{id}", what: `B's admin removes A's ${who}`, send: (w) => req("DELETE", `/users/${w.a[who].id}`, asB(w)), expect: notFound }),
  ),
  {
    op: "DELETE /api/v1/users/{id}",
    what: "B's admin removes B's member handing the deals to A's admin: 404, B's member stays",
    send: (w) => req("DELETE", `/users/${w.b.member.id}?reassign_to=${w.a.admin.id}`, asB(w)),
    expect: notFound,
    check: async (_b, w) => expect(await w.t.ctx.repos.users.byId(w.b.tenantId, w.b.member.id)).not.toBeNull(),
  },
  {
    op: "DELETE /api/v1/users/{id}",
    what: "B's member removes A's member",
    send: (w) => req("DELETE", `/users/${w.a.member.id}`, { token: w.b.member.access, tenant: "bravo" }),
    expect: { status: 403, code: "forbidden" },
  },
  ...(["admin", "member"] as const).map(
    (who): Attempt => ({ op: "POST /api/v1/users/{id}/2fa/reset", what: `B's admin resets A's ${who}'s second factor`, send: (w) => req("POST", `/users/${w.a[who].id}/2fa/reset`, asB(w)), expect: notFound }),
  ),
  {
    op: "POST /api/v1/users/{id}/2fa/reset",
    what: "B's member resets A's member's second factor",
    send: (w) => req("POST", `/users/${w.a.member.id}/2fa/reset`, { token: w.b.member.access, tenant: "bravo" }),
    expect: { status: 403, code: "forbidden" },
  },
  {
    op: "POST /api/v1/users/{id}/2fa/reset",
    what: "reset naming A's tenant_id resets B's member",
    send: (w) => req("POST", `/users/${w.b.member.id}/2fa/reset`, { ...asB(w), body: { tenant_id: w.a.tenantId } }),
    expect: { status: 200 },
    check: landedInB,
    tenantIdInBody: true,
  },
  ...(["admin", "member"] as const).map(
    (who): Attempt => ({ op: "POST /api/v1/users/{id}/unlock", what: `B's admin unlocks A's ${who}`, send: (w) => req("POST", `/users/${w.a[who].id}/unlock`, asB(w)), expect: notFound }),
  ),
  {
    op: "POST /api/v1/users/{id}/unlock",
    what: "B's admin unlocks B's member naming A's tenant_id: clears only B's counter for the shared address",
    send: (w) => req("POST", `/users/${w.b.member.id}/unlock`, { ...asB(w), body: { tenant_id: w.a.tenantId } }),
    expect: { status: 200 },
    check: landedInB,
    tenantIdInBody: true,
  },
  // ---- the organization ----
  {
    op: "GET /api/v1/tenant",
    what: "B reads its organization, never A's",
    send: (w) => req("GET", "/tenant", asB(w)),
    expect: { status: 200 },
    check: (b, w) => expect({ id: b.id, subdomain: b.subdomain }).toEqual({ id: w.b.tenantId, subdomain: "bravo" }),
  },
  {
    op: "PATCH /api/v1/tenant",
    what: "rename naming A's tenant_id renames B",
    send: (w) => req("PATCH", "/tenant", { ...asB(w), body: { name: "Bravo Renamed", tenant_id: w.a.tenantId, modules: ["crm", "users"] } }),
    expect: { status: 200 },
    check: (b, w) => expect({ id: b.id, name: b.name }).toEqual({ id: w.b.tenantId, name: "Bravo Renamed" }),
    tenantIdInBody: true,
  },
  {
    op: "PATCH /api/v1/tenant",
    what: "B's member renames the organization",
    send: (w) => req("PATCH", "/tenant", { token: w.b.member.access, tenant: "bravo", body: { name: "Mine" } }),
    expect: { status: 403, code: "forbidden" },
  },
  // ---- the proxy's certificate question (public, but only for a proxy on the server's machine) ----
  {
    op: "GET /api/v1/tls/ask",
    what: "B asks whether A's host gets a certificate: refused, as for anyone not on the server's machine",
    send: (w) => req("GET", `/tls/ask?domain=${w.a.subdomain}.localhost`, asB(w)),
    expect: { status: 403, code: "loopback_only" },
  },
];
