/**
 * The organization's sign-in policy (issue 33): "members must use a passkey or 2FA" and "admins
 * must use a passkey". A member who does not comply may only do what complying needs.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { TestApp } from "../helpers";
import { SoftAuthenticator } from "../support/soft-authenticator";
import { ME, SESSIONS, addMember, allAudit, clockedApp, login } from "../auth/support";
import { DISABLE, STATUS, enable } from "../auth/two-factor/support";
import { appCode } from "../auth/two-factor/rfc6238";

const TENANT = "/api/v1/tenant";
const DEALS = "/api/v1/crm/deals";
const P = "/api/v1/auth/passkeys";
const apps: TestApp[] = [];
afterAll(async () => {
  for (const a of apps) await a.close();
});

async function world(sub: string) {
  const { t, clock } = clockedApp();
  apps.push(t);
  const org = await t.signup(sub);
  const m = await addMember(t, org.tenant.id, `m@${sub}.test`, "member password");
  const memberToken = (await login(t, m.email, "member password", { "x-tenant": sub })).body.access_token as string;
  const as = (token: string) => ({
    get: (path: string) => t.json("GET", path, { token, tenant: sub }),
    call: (method: string, path: string, body?: unknown) => t.json(method, path, { token, tenant: sub, ...(body === undefined ? {} : { body }) }),
  });
  const setPolicy = (body: Record<string, boolean>, token = org.access_token) => t.json("PATCH", TENANT, { token, tenant: sub, body });
  const addPasskey = async (token: string) => {
    const key = new SoftAuthenticator(`http://${sub}.localhost:8000`);
    const o = await t.json("POST", `${P}/register/options`, { token, tenant: sub });
    expect(o.status).toBe(200);
    const r = await t.json("POST", `${P}/register/verify`, { token, tenant: sub, body: { response: key.create(o.body) } });
    expect(r.status).toBe(201);
    return r.body.id as string;
  };
  return { t, clock, org, sub, memberToken, admin: as(org.access_token), member: as(memberToken), setPolicy, addPasskey };
}

const denial = (r: { status: number; body: { code?: string } | null }) => ({ status: r.status, code: r.body?.code });

describe("sign-in policy", () => {
  test("off (the default): the organization says so, and nothing is held back", async () => {
    const w = await world("policyoff");
    const tenant = await w.member.get(TENANT);
    expect(tenant.body).toMatchObject({ require_passkey_or_2fa: false, require_passkey_for_admins: false });
    expect((await w.member.get(DEALS)).status).toBe(200);
    expect((await w.member.get(ME)).body.policy_setup).toBeNull();
  });

  test("members must use a passkey or 2FA: a member without either gets policy_setup_required everywhere but the setup operations", async () => {
    const w = await world("policymfa");
    const r = await w.setPolicy({ require_passkey_or_2fa: true });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ require_passkey_or_2fa: true, require_passkey_for_admins: false });

    const blocked = await w.member.get(DEALS);
    expect(denial(blocked)).toEqual({ status: 403, code: "policy_setup_required" });
    expect(blocked.body.detail).toContain("passkey or two-factor");
    for (const [method, path] of [["POST", "/api/v1/crm/accounts"], ["GET", "/api/v1/users"], ["PATCH", "/api/v1/auth/passkeys/x"], ["POST", "/api/v1/auth/2fa/backup-codes"]] as const) {
      expect({ path, ...denial(await w.member.call(method, path, {})) }).toEqual({ path, status: 403, code: "policy_setup_required" });
    }
    // What complying needs still answers.
    expect((await w.member.get(ME)).body.policy_setup).toBe("passkey_or_2fa");
    for (const path of [TENANT, `${TENANT}/`, SESSIONS, P, STATUS]) expect({ path, status: (await w.member.get(path)).status }).toEqual({ path, status: 200 });
    expect((await w.member.get(TENANT)).body.require_passkey_or_2fa).toBe(true);

    // A passkey complies.
    await w.addPasskey(w.memberToken);
    expect((await w.member.get(DEALS)).status).toBe(200);
    expect((await w.member.get(ME)).body.policy_setup).toBeNull();

    // So does 2FA: the admin (held back too, since the policy is everyone's) turns it on.
    expect(denial(await w.admin.get(DEALS))).toEqual({ status: 403, code: "policy_setup_required" });
    await enable(w.t, w.org.access_token);
    expect((await w.admin.get(DEALS)).status).toBe(200);
    // Logging out is one of the allowed operations.
    const m2 = await addMember(w.t, w.org.tenant.id, "m2@policymfa.test", "member password");
    const token2 = (await login(w.t, m2.email, "member password", { "x-tenant": w.sub })).body.access_token as string;
    expect((await w.t.json("POST", "/api/v1/auth/logout", { token: token2, tenant: w.sub })).status).toBe(200);
  });

  test("admins must use a passkey: an admin with only 2FA is held back, members are not; a passkey releases the admin", async () => {
    const w = await world("policyadm");
    await enable(w.t, w.org.access_token);
    expect((await w.setPolicy({ require_passkey_for_admins: true })).body).toMatchObject({ require_passkey_or_2fa: false, require_passkey_for_admins: true });
    const blocked = await w.admin.get(DEALS);
    expect(denial(blocked)).toEqual({ status: 403, code: "policy_setup_required" });
    expect(blocked.body.detail).toContain("admins to sign in with a passkey");
    expect((await w.admin.get(ME)).body.policy_setup).toBe("passkey");
    expect((await w.member.get(DEALS)).status).toBe(200);
    // Even the policy itself cannot be changed until the admin complies.
    expect(denial(await w.setPolicy({ require_passkey_for_admins: false }))).toEqual({ status: 403, code: "policy_setup_required" });
    await w.addPasskey(w.org.access_token);
    expect((await w.admin.get(DEALS)).status).toBe(200);
    expect((await w.admin.get(ME)).body.policy_setup).toBeNull();
  });

  test("changing the policy: admins only, with a recent proof; audited", async () => {
    const w = await world("policyauth");
    await w.addPasskey(w.org.access_token); // the admin complies: their second change below is not held back
    expect(denial(await w.setPolicy({ require_passkey_or_2fa: true }, w.memberToken))).toEqual({ status: 403, code: "forbidden" });
    expect(denial(await w.setPolicy({ require_passkey_or_2fa: "yes" } as never))).toEqual({ status: 422, code: undefined });
    w.clock.advance(601_000);
    expect(denial(await w.setPolicy({ require_passkey_or_2fa: true }))).toEqual({ status: 403, code: "reauthentication_required" });
    expect((await w.admin.get(TENANT)).body.require_passkey_or_2fa).toBe(false);
    expect((await w.t.json("POST", "/api/v1/auth/reauthenticate", { token: w.org.access_token, tenant: w.sub, body: { password: w.org.password } })).status).toBe(200);
    expect((await w.setPolicy({ require_passkey_or_2fa: true })).status).toBe(200);
    expect((await w.setPolicy({ require_passkey_or_2fa: true })).status).toBe(200);
    const rows = (await allAudit(w.t)).filter((a) => a.tenant_id === w.org.tenant.id && a.action === "tenant.sign_in_policy_changed");
    // The second, changing nothing, writes no row.
    expect(rows.map((a) => JSON.parse(String(a.detail)))).toEqual([{ require_passkey_or_2fa: true, require_passkey_for_admins: false }]);
  });

  test("the last passkey or 2FA the policy needs cannot be removed: 409 required_by_policy", async () => {
    const w = await world("policykeep");
    const first = await w.addPasskey(w.memberToken);
    const second = await w.addPasskey(w.memberToken);
    const factor = await enable(w.t, w.org.access_token);
    await w.addPasskey(w.org.access_token);
    expect((await w.setPolicy({ require_passkey_or_2fa: true, require_passkey_for_admins: true })).status).toBe(200);

    expect((await w.member.call("DELETE", `${P}/${first}`)).status).toBe(204);
    const last = await w.member.call("DELETE", `${P}/${second}`);
    expect(denial(last)).toEqual({ status: 409, code: "required_by_policy" });
    expect((await w.member.get(P)).body).toHaveLength(1);

    // The admin holds a passkey and 2FA: turning 2FA off is allowed while a passkey remains.
    const r = await w.admin.call("POST", DISABLE, { password: w.org.password, code: appCode(factor.secret, w.t.ctx.now(), 1) });
    expect(r.status).toBe(200);
    const [adminKey] = (await w.admin.get(P)).body as Array<{ id: string }>;
    expect(denial(await w.admin.call("DELETE", `${P}/${adminKey!.id}`))).toEqual({ status: 409, code: "required_by_policy" });
  });

  test("2FA cannot be turned off by a member whose only compliance it is", async () => {
    const w = await world("policy2fa");
    const m = await addMember(w.t, w.org.tenant.id, "two@policy2fa.test", "member password");
    const token = (await login(w.t, m.email, "member password", { "x-tenant": w.sub })).body.access_token as string;
    const factor = await enable(w.t, token);
    await w.addPasskey(w.org.access_token);
    expect((await w.setPolicy({ require_passkey_or_2fa: true })).status).toBe(200);
    const r = await w.t.json("POST", DISABLE, { token, tenant: w.sub, body: { password: "member password", code: appCode(factor.secret, w.t.ctx.now(), 1) } });
    expect(denial(r)).toEqual({ status: 409, code: "required_by_policy" });
    expect((await w.t.json("GET", STATUS, { token, tenant: w.sub })).body.enabled).toBe(true);
  });
});
