import { afterEach, describe, expect, test } from "bun:test";
import { type TestApp, testApp } from "../../helpers";
import { accept, invited } from "../../team/support";
import { LOGIN, addMember, login } from "../support";
import { CHANGE, RESET, askReset, newestTokenOf } from "./support";

/**
 * Every way to choose a password refuses a common one, or one holding the address's or the
 * organization's name (issue 33.3): 422 password_too_common at the field. Signing in never tells.
 */

const apps: TestApp[] = [];
afterEach(() => {
  for (const t of apps.splice(0)) t.close();
});
const app = () => {
  const t = testApp();
  apps.push(t);
  return t;
};

function expectTooCommon(r: { status: number; body: any }, field: string, why: string) {
  expect(r.status).toBe(422);
  expect(r.body.detail).toHaveLength(1);
  expect(r.body.detail[0].loc).toEqual(["body", field]);
  expect(r.body.detail[0].type).toBe("password_too_common");
  expect(r.body.detail[0].msg).toContain(why);
  // The password itself is not echoed back.
  expect(JSON.stringify(r.body)).not.toMatch(/input/);
}

const LISTED = "common or leaked";

describe("password_too_common", () => {
  test("signup: a listed password, whatever its case, the address's name and the organization's are refused; nothing is created", async () => {
    const t = app();
    const body = (password: string) => ({ email: "maria.lopez@harbor.test", password, tenant_name: "Blue Harbor", subdomain: "harbor" });
    expectTooCommon(await t.json("POST", "/api/v1/auth/signup", { body: body("PASSWORD123") }), "password", LISTED);
    expectTooCommon(await t.json("POST", "/api/v1/auth/signup", { body: body("maria.lopez is me") }), "password", "email address's name");
    expectTooCommon(await t.json("POST", "/api/v1/auth/signup", { body: body("our blueharbor 2026") }), "password", "organization's name");
    expectTooCommon(await t.json("POST", "/api/v1/auth/signup", { body: body("harbor lights 2026") }), "password", "organization's name");
    expect(await t.ctx.repos.tenants.bySubdomain("harbor")).toBeNull();
    expect((await t.json("POST", "/api/v1/auth/signup", { body: body("zq-7 otter lamp mile") })).status).toBe(201);
  });

  test("reset: refused at the field, the token stays usable, the old password still works", async () => {
    const t = app();
    const org = await t.signup("acme");
    await askReset(t, org.email, { tenant: "acme" });
    const token = await newestTokenOf(t, "password_reset");
    expectTooCommon(await t.json("POST", RESET, { body: { token, password: "iloveyou1" } }), "password", LISTED);
    expectTooCommon(await t.json("POST", RESET, { body: { token, password: "the org acme wins" } }), "password", "organization's name");
    expect((await login(t, org.email, org.password, { "x-tenant": "acme" })).status).toBe(200);
    expect((await t.json("POST", RESET, { body: { token, password: "zq-7 otter lamp mile" } })).status).toBe(200);
  });

  test("change: refused at new_password before the current one is checked (no lock count)", async () => {
    const t = app();
    const org = await t.signup("acme");
    const r = await t.json("POST", CHANGE, { token: org.access_token, body: { current_password: org.password, new_password: "qwertyuiop" } });
    expectTooCommon(r, "new_password", LISTED);
    const wrongCurrent = await t.json("POST", CHANGE, { token: org.access_token, body: { current_password: "not the password", new_password: "admin forever 99" } });
    expectTooCommon(wrongCurrent, "new_password", "email address's name");
    expect((await login(t, org.email, org.password, { "x-tenant": "acme" })).status).toBe(200);
  });

  test("invitation accept: refused, the invitation stays pending", async () => {
    const t = app();
    const admin = await t.signup("acme");
    const { token } = await invited(t, admin, "jordan@acme.test");
    expectTooCommon(await accept(t, { token, password: "Football1" }), "password", LISTED);
    expectTooCommon(await accept(t, { token, password: "I am Jordan, hi" }), "password", "email address's name");
    expect((await accept(t, { token, password: "zq-7 otter lamp mile" })).status).toBe(201);
  });

  test("sign-in with an existing listed password works and says nothing about the list", async () => {
    const t = app();
    const org = await t.signup("acme");
    // Set before the list existed (straight into the store, as an older release could have).
    await addMember(t, org.tenant.id, "old@acme.test", "password1");
    const r = await t.json("POST", LOGIN, { body: { email: "old@acme.test", password: "password1" }, tenant: "acme" });
    expect(r.status).toBe(200);
    const plain = await t.json("POST", LOGIN, { body: { email: org.email, password: org.password }, tenant: "acme" });
    expect(Object.keys(r.body).sort()).toEqual(Object.keys(plain.body).sort());
    expect(JSON.stringify(r.body)).not.toMatch(/common|leaked|list/i);
  });
});
