/**
 * Step-up where it matters most (issue 29.3): linking and unlinking identities, inviting with an
 * admin profile, changing a member's role or profile, resetting another member's 2FA, removing a
 * member and changing the organization need this session's first-factor proof within
 * SUITE_REAUTH_WINDOW, else 403 `reauthentication_required`; POST /auth/reauthenticate renews it.
 */
import { afterAll, expect, test } from "bun:test";
import type { TestApp } from "../helpers";
import { addMember, clockedApp } from "../auth/support";
import { testSql } from "../support/sql";
import { INVITE, USERS } from "./support";

const apps: TestApp[] = [];
afterAll(() => apps.forEach((a) => a.close()));
const WINDOW_MS = 600_000;

async function staleAdmin() {
  // Access tokens outlive the window here, so that only the session's proof time decides.
  const { t, clock } = clockedApp({ env: { SUITE_ACCESS_TTL: "7200" } });
  apps.push(t);
  const admin = await t.signup("acme");
  const member = await addMember(t, admin.tenant.id, "pat@acme.test", "pat's own password");
  const adminProfile = (await testSql(t.ctx).get<{ id: string }>("SELECT id FROM profiles WHERE tenant_id = ?1 AND is_admin = 1", admin.tenant.id))!.id;
  const standard = (await testSql(t.ctx).get<{ id: string }>("SELECT id FROM profiles WHERE tenant_id = ?1 AND is_admin = 0 ORDER BY name LIMIT 1", admin.tenant.id))!.id;
  clock.advance(WINDOW_MS + 1000);
  const as = (method: string, path: string, body?: Record<string, unknown>) => t.json(method, path, { token: admin.access_token, body });
  return { t, admin, member, adminProfile, standard, as };
}

const code = (r: { status: number; body: { code?: string } | null }) => ({ status: r.status, code: r.body?.code ?? null });
const REAUTH = { status: 403, code: "reauthentication_required" };

test("past the window each dangerous change is 403 reauthentication_required and changes nothing; a rename or a plain invite is not held", async () => {
  const { t, admin, member, adminProfile, standard, as } = await staleAdmin();
  expect(code(await as("PATCH", `${USERS}/${member.id}`, { role: "admin" }))).toEqual(REAUTH);
  expect(code(await as("PATCH", `${USERS}/${member.id}`, { profile_id: adminProfile }))).toEqual(REAUTH);
  expect(code(await as("POST", `${USERS}/${member.id}/2fa/reset`))).toEqual(REAUTH);
  expect(code(await as("DELETE", `${USERS}/${member.id}`))).toEqual(REAUTH);
  expect(code(await as("POST", INVITE, { email: "boss@acme.test", profile_id: adminProfile }))).toEqual(REAUTH);
  expect(code(await as("PATCH", "/api/v1/tenant", { name: "Renamed" }))).toEqual(REAUTH);
  expect(code(await as("PATCH", "/api/v1/tenant", { modules: ["crm"] }))).toEqual(REAUTH);
  expect(code(await as("POST", "/api/v1/auth/identities/link/any-provider", {}))).toEqual(REAUTH);
  expect(code(await as("DELETE", "/api/v1/auth/identities/any-identity"))).toEqual(REAUTH);

  // Nothing changed.
  const row = await testSql(t.ctx).get<{ role: string; profile_id: string | null }>("SELECT role, profile_id FROM users WHERE id = ?1", member.id);
  expect(row).toEqual({ role: "member", profile_id: null });
  expect((await as("GET", "/api/v1/tenant")).body.name).toBe("Org acme");
  expect(await testSql(t.ctx).get("SELECT 1 AS x FROM invitations WHERE email = 'boss@acme.test'")).toBeNull();

  // Not dangerous: a rename, and an invitation with a profile that grants no admin rights.
  expect((await as("PATCH", `${USERS}/${member.id}`, { full_name: "Pat" })).status).toBe(200);
  expect((await as("POST", INVITE, { email: "new@acme.test", profile_id: standard })).status).toBe(201);

  // A proof renews the window: every change now goes through.
  expect((await as("POST", "/api/v1/auth/reauthenticate", { password: admin.password })).status).toBe(200);
  expect((await as("PATCH", `${USERS}/${member.id}`, { role: "admin", profile_id: adminProfile })).status).toBe(200);
  expect((await as("POST", INVITE, { email: "boss@acme.test", profile_id: adminProfile })).status).toBe(201);
  expect((await as("PATCH", "/api/v1/tenant", { name: "Renamed" })).status).toBe(200);
  expect((await as("POST", `${USERS}/${member.id}/2fa/reset`)).status).toBe(200);
  expect((await as("POST", "/api/v1/auth/identities/link/any-provider", {})).status).toBe(404);
  expect((await as("DELETE", `${USERS}/${member.id}`)).status).toBe(204);
});

test("a member still gets 403 forbidden and bad input 422 before the step-up is asked for", async () => {
  const { t, member, as } = await staleAdmin();
  const memberLogin = await t.json("POST", "/api/v1/auth/login", { body: { email: member.email, password: member.password } });
  const asMember = (method: string, path: string, body?: Record<string, unknown>) => t.json(method, path, { token: memberLogin.body.access_token, body });
  expect(code(await asMember("PATCH", `${USERS}/${member.id}`, { role: "admin" })).code).toBe("forbidden");
  expect((await as("PATCH", `${USERS}/${member.id}`, {})).status).toBe(422);
  expect((await as("PATCH", "/api/v1/tenant", { name: "  " })).status).toBe(422);
});
