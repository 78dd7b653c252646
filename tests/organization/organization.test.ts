import { afterAll, describe, expect, test } from "bun:test";
import { loadConfig, settingsHelp } from "../../src/config";
import { addMember, allAudit, login } from "../auth/support";
import { crmOrg } from "../crm/support";
import { testApp } from "../helpers";
import { testSql } from "../support/sql";

const t = testApp();
afterAll(() => t.close());
const TENANT = "/api/v1/tenant";

async function org(subdomain: string) {
  const o = await crmOrg(t, subdomain);
  const m = await addMember(t, o.tenant.id, `m@${subdomain}.test`, "member password");
  const memberToken = (await login(t, m.email, "member password", { "x-tenant": subdomain })).body.access_token as string;
  return { ...o, memberToken, patch: (body: unknown, token = o.token) => t.json("PATCH", TENANT, { token, body }) };
}

describe("GET /tenant", () => {
  test("any member reads their own organization: id, name, subdomain, modules, created_at", async () => {
    const o = await org("readorg");
    await t.signup("readorgother");
    const r = await t.json("GET", TENANT, { token: o.memberToken });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["created_at", "id", "modules", "name", "require_passkey_for_admins", "require_passkey_or_2fa", "subdomain"]);
    expect(r.body).toMatchObject({ id: o.tenant.id, name: "Org readorg", subdomain: "readorg", modules: ["crm", "users"] });
    expect((await t.json("GET", TENANT)).status).toBe(401);
  });
});

describe("PATCH /tenant", () => {
  test("admins rename the organization (trimmed); audited with before and after", async () => {
    const o = await org("renameorg");
    const r = await o.patch({ name: "  Acme Ltd  " });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: "Acme Ltd", modules: ["crm", "users"] });
    expect((await t.json("GET", "/api/v1/auth/me", { token: o.memberToken })).body.tenant.name).toBe("Acme Ltd");
    const rows = (await allAudit(t)).filter((a) => a.tenant_id === o.tenant.id && a.action === "tenant.renamed");
    expect(rows.map((a) => JSON.parse(String(a.detail)))).toEqual([{ from: "Org renameorg", to: "Acme Ltd" }]);
    expect(rows[0]!.user_id).toBe(o.user.id);
  });

  test("members get 403 forbidden whatever they send, before the body is looked at", async () => {
    const o = await org("memberorg");
    for (const body of [{ name: "Mine now" }, { name: 5 }, {}]) {
      const r = await o.patch(body, o.memberToken);
      expect({ status: r.status, code: r.body.code }).toEqual({ status: 403, code: "forbidden" });
    }
    expect((await t.json("GET", TENANT, { token: o.token })).body.name).toBe("Org memberorg");
  });

  test("turning the CRM off gives module_disabled at once and keeps the data; on again shows it all", async () => {
    const o = await org("crmtoggle");
    const acct = await o.account("Kept Inc");
    const deal = await o.deal({ title: "Kept deal", account_id: acct.id });
    const off = await o.patch({ modules: ["users"] });
    expect(off.body.modules).toEqual(["users"]);
    for (const path of ["/deals", `/deals/${deal.id}`, "/accounts", "/pipeline-stages"]) {
      const r = await o.call("GET", path);
      expect({ path, status: r.status, code: r.body.code }).toEqual({ path, status: 403, code: "module_disabled" });
    }
    expect((await o.call("POST", "/accounts", { name: "New" })).body.code).toBe("module_disabled");
    expect((await o.patch({ modules: ["crm", "users", "crm"] })).body.modules).toEqual(["crm", "users"]);
    expect((await o.ok("GET", `/deals/${deal.id}`)).title).toBe("Kept deal");
    expect((await o.list()).total).toBe(1);
    const changes = (await allAudit(t)).filter((a) => a.tenant_id === o.tenant.id && a.action === "tenant.modules_changed");
    expect(changes.map((a) => JSON.parse(String(a.detail)))).toEqual([
      { enabled: [], disabled: ["crm"], modules: ["users"] },
      { enabled: ["crm"], disabled: [], modules: ["crm", "users"] },
    ]);
  });

  test("the users module may be turned off: the team's admin routes answer module_disabled, the organization page still works", async () => {
    const o = await org("usersoff");
    expect((await o.patch({ modules: ["crm"] })).status).toBe(200);
    expect((await t.json("GET", "/api/v1/users", { token: o.token })).body.code).toBe("module_disabled");
    expect((await o.patch({ modules: ["crm", "users"] })).body.modules).toEqual(["crm", "users"]);
    expect((await t.json("GET", "/api/v1/users", { token: o.token })).status).toBe(200);
  });

  test("422: unknown module, blank or long name, nothing to change; nothing written", async () => {
    const o = await org("badorg");
    const unknown = await o.patch({ modules: ["crm", "erp"] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0].loc).toEqual(["body", "modules", 1]);
    expect((await o.patch({ name: "" })).body.detail[0]).toMatchObject({ loc: ["body", "name"], type: "string_too_short" });
    expect((await o.patch({ name: "   " })).body.detail[0]).toMatchObject({ loc: ["body", "name"] });
    expect((await o.patch({ name: "x".repeat(101) })).body.detail[0].type).toBe("string_too_long");
    expect((await o.patch({ name: "bad\nname" })).status).toBe(422);
    expect((await o.patch({})).body.detail[0]).toMatchObject({ loc: ["body"], type: "value_error" });
    expect((await t.json("GET", TENANT, { token: o.token })).body).toMatchObject({ name: "Org badorg", modules: ["crm", "users"] });
  });
});

describe("SUITE_SIGNUP", () => {
  test("open by default; closed or open by environment or flag; anything else is refused; listed in help", () => {
    expect(loadConfig({}, {}).signup).toBe("open");
    expect(loadConfig({}, { SUITE_SIGNUP: "closed" }).signup).toBe("closed");
    expect(loadConfig({ signup: "Closed" }, { SUITE_SIGNUP: "open" }).signup).toBe("closed");
    expect(() => loadConfig({}, { SUITE_SIGNUP: "maybe" })).toThrow('invalid SUITE_SIGNUP="maybe": expected open or closed');
    expect(settingsHelp()).toContain("--signup");
    expect(settingsHelp()).toContain("SUITE_SIGNUP");
  });

  test("closed: signup answers 403 signup_closed whatever the body, creates nothing; the CLI still creates organizations", async () => {
    const closed = testApp({ env: { SUITE_SIGNUP: "closed" } });
    try {
      const good = { email: "a@closed.test", password: "correct horse battery", tenant_name: "Closed", subdomain: "closed" };
      for (const body of [good, {}, { email: 5 }]) {
        const r = await closed.json("POST", "/api/v1/auth/signup", { body });
        expect({ status: r.status, code: r.body.code }).toEqual({ status: 403, code: "signup_closed" });
      }
      expect(await testSql(closed.ctx).get("SELECT count(*) AS n FROM tenants")).toEqual({ n: 0 });
      const made = await closed.ctx.tenants.createOrganization(good, { ip: null, userAgent: null }, "cli");
      expect(made.tenant.subdomain).toBe("closed");
      const signIn = await login(closed, good.email, good.password, { "x-tenant": "closed" });
      expect(signIn.status).toBe(200);
      // The public page is told, through its meta, to hide the form.
      const page = await closed.request("GET", "/", { headers: { accept: "text/html" } });
      expect(await page.text()).toContain("&quot;signup&quot;:&quot;closed&quot;");
    } finally {
      closed.close();
    }
  });
});
