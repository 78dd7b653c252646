import { expect } from "bun:test";
import { SoftAuthenticator } from "../../support/soft-authenticator";
import { testSql } from "../../support/sql";
import { type Attempt, asB, notFound, ownPage, req } from "./attempt-kit";

const invalid = { status: 401, code: "invalid_passkey" };

/** Passkeys: A's passkey ids, A's open challenges and A's signed answers, from B. */
export const PASSKEY_ATTEMPTS: Attempt[] = [
  {
    op: "GET /api/v1/auth/passkeys",
    what: "B's admin lists passkeys: B's own only (none)",
    send: (w) => req("GET", "/auth/passkeys", asB(w)),
    expect: { status: 200 },
    check: ownPage("passkeys", (w) => `user_id = '${w.b.admin.id}'`),
  },
  {
    op: "PATCH /api/v1/auth/passkeys/{id}",
    what: "B's admin renames A's admin's passkey",
    send: (w) => req("PATCH", `/auth/passkeys/${w.a.passkey.id}`, asB(w, { body: { name: "Taken" } })),
    expect: notFound,
  },
  {
    op: "DELETE /api/v1/auth/passkeys/{id}",
    what: "B's admin removes A's admin's passkey",
    send: (w) => req("DELETE", `/auth/passkeys/${w.a.passkey.id}`, asB(w)),
    expect: notFound,
  },
  {
    op: "POST /api/v1/auth/passkeys/register/options",
    what: "B's admin asks for creation options: B's relying party and B's admin, nothing of A",
    send: (w) => req("POST", "/auth/passkeys/register/options", asB(w)),
    expect: { status: 200 },
    check: (body, w) => {
      expect(body.rp.id).toBe("bravo.localhost");
      expect(Buffer.from(body.user.id, "base64url").toString()).toBe(`${w.b.tenantId}.${w.b.admin.id}`);
      expect(body.excludeCredentials).toEqual([]);
    },
  },
  {
    op: "POST /api/v1/auth/passkeys/register/verify",
    what: "B's admin sends the credential made for A's admin's registration challenge",
    send: (w) => req("POST", "/auth/passkeys/register/verify", asB(w, { body: { response: w.a.passkey.registration } })),
    expect: { status: 400, code: "passkey_registration_failed" },
  },
  {
    op: "POST /api/v1/auth/passkeys/register/verify",
    what: "B's admin registers a passkey of its own, naming A's tenant_id: it lands in B",
    send: async (w) => {
      const options = (await w.t.json("POST", "/api/v1/auth/passkeys/register/options", asB(w))).body;
      const response = new SoftAuthenticator("http://bravo.localhost:8000").create(options);
      return req("POST", "/auth/passkeys/register/verify", asB(w, { body: { response, tenant_id: w.a.tenantId } }));
    },
    expect: { status: 201 },
    check: async (body, w) => {
      const rows = await testSql(w.t.ctx).all<{ tenant_id: string; user_id: string }>("SELECT tenant_id, user_id FROM passkeys WHERE id = ?1", body.id);
      expect(rows).toEqual([{ tenant_id: w.b.tenantId, user_id: w.b.admin.id }]);
    },
    tenantIdInBody: true,
  },
  ...[{ tenant: "bravo" }, { headers: { "x-tenant": "bravo" } }].map(
    (where): Attempt => ({
      op: "POST /api/v1/auth/passkeys/login/options",
      what: `options on B (${Object.keys(where)[0]}): B's relying party`,
      send: () => req("POST", "/auth/passkeys/login/options", where),
      expect: { status: 200 },
      check: (body) => expect(body.rpId).toBe("bravo.localhost"),
    }),
  ),
  ...[{ tenant: "bravo" }, { headers: { "x-tenant": "bravo" } }].map(
    (where): Attempt => ({
      op: "POST /api/v1/auth/passkeys/login/verify",
      what: `A's admin's signed answer to A's challenge, on B (${Object.keys(where)[0]})`,
      send: (w) => req("POST", "/auth/passkeys/login/verify", { ...where, body: { response: w.a.passkey.assertion } }),
      expect: invalid,
    }),
  ),
  {
    op: "POST /api/v1/auth/reauthenticate",
    what: "B's admin proves a recent sign-in with A's admin's signed passkey answer",
    send: (w) => req("POST", "/auth/reauthenticate", asB(w, { body: { passkey: w.a.passkey.assertion } })),
    expect: invalid,
  },
];
