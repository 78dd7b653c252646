import { afterAll, describe, expect, test } from "bun:test";
import { NAME_PATTERN, SINGLE_LINE_PATTERN } from "../../src/kernel/validation";
import { CRM, crmOrg } from "../crm/support";
import { testApp } from "../helpers";
import { testSql } from "../support/sql";

// Issue 13 §2e: names reach the text of mails, so a newline or a bidi override in one forges or
// disguises mail text; a NUL in a search made SQLite fail. Each is a 422 string_pattern_mismatch.
const t = testApp();
afterAll(() => t.close());

const BAD: Array<[what: string, value: string]> = [
  ["a NUL", "Ada\u0000Lovelace"],
  ["a newline", "Ada\nSubject: you won"],
  ["a carriage return", "Ada\rLovelace"],
  ["a tab", "Ada\tLovelace"],
  ["an escape", "Ada\u001b[31m"],
  ["DEL", "Ada\u007f"],
  ["a C1 control (NEL)", "Ada\u0085Lovelace"],
  ["a line separator", "Ada\u2028Lovelace"],
  ["a paragraph separator", "Ada\u2029Lovelace"],
  ["a right-to-left override", "Ada \u202Egpj.exe"],
  ["a left-to-right embedding", "Ada \u202A x"],
  ["a first-strong isolate", "Ada \u2068x\u2069"],
];

/** The 422 items as [loc, type]. */
const itemsOf = (body: { detail: Array<{ loc: unknown[]; type: string }> }) => body.detail.map((d) => [d.loc, d.type]);

describe("names with control characters", () => {
  test("every name-like field of every body: 422 string_pattern_mismatch at its loc", async () => {
    const org = await crmOrg(t, "ctlnames");
    const account = await org.account("Acme");
    const contact = await org.contact("Grace", "Hopper");
    const deal = await org.deal({ title: "First", account_id: account.id });
    const signup = { email: "x@ctlsignup.test", password: "correct horse battery", tenant_name: "Fine", subdomain: "ctlsignup" };
    const accept = { token: "t".repeat(40), password: "correct horse battery" };
    // [method, path, body without the field, field, token?]
    const cases: Array<[string, string, Record<string, unknown>, string, boolean]> = [
      ["POST", "/api/v1/auth/signup", signup, "tenant_name", false],
      ["POST", "/api/v1/auth/signup", signup, "full_name", false],
      ["POST", "/api/v1/auth/invitations/accept", accept, "full_name", false],
      ["PATCH", `/api/v1/users/${org.user.id}`, {}, "full_name", true],
      ["POST", `${CRM}/pipeline-stages`, { key: "ctl" }, "name", true],
      ["POST", `${CRM}/accounts`, {}, "name", true],
      ["POST", `${CRM}/accounts`, { name: "A" }, "industry", true],
      ["POST", `${CRM}/accounts`, { name: "A" }, "domain", true],
      ["PATCH", `${CRM}/accounts/${account.id}`, {}, "name", true],
      ["POST", `${CRM}/contacts`, {}, "first_name", true],
      ["POST", `${CRM}/contacts`, { first_name: "G" }, "last_name", true],
      ["POST", `${CRM}/contacts`, { first_name: "G" }, "phone", true],
      ["PATCH", `${CRM}/contacts/${contact.id}`, {}, "first_name", true],
      ["PATCH", `${CRM}/contacts/${contact.id}`, {}, "last_name", true],
      ["POST", `${CRM}/deals`, { account_id: account.id }, "title", true],
      ["PATCH", `${CRM}/deals/${deal.id}`, {}, "title", true],
      ["PATCH", `${CRM}/deals/${deal.id}`, {}, "stage", true],
    ];
    let checked = 0;
    for (const [method, path, base, field, auth] of cases) {
      for (const [what, value] of BAD) {
        const r = await t.json(method, path, { body: { ...base, [field]: value }, token: auth ? org.token : undefined });
        expect({ method, path, field, what, status: r.status }).toEqual({ method, path, field, what, status: 422 });
        expect(itemsOf(r.body)).toContainEqual([["body", field], "string_pattern_mismatch"]);
        const item = r.body.detail.find((d: { loc: unknown[] }) => d.loc[1] === field);
        expect([NAME_PATTERN, SINGLE_LINE_PATTERN]).toContain(item.ctx.pattern);
        checked++;
      }
    }
    expect(checked).toBe(cases.length * BAD.length);
    // Nothing was written: the account, contact and deal keep their names; no stage, no tenant.
    expect((await org.ok("GET", `/accounts/${account.id}`)).name).toBe("Acme");
    expect((await org.ok("GET", `/contacts/${contact.id}`)).last_name).toBe("Hopper");
    expect((await org.ok("GET", `/deals/${deal.id}`)).title).toBe("First");
    expect(await testSql(t.ctx).get("SELECT count(*) AS n FROM tenants WHERE subdomain = 'ctlsignup'")).toEqual({ n: 0 });
  });

  test("ordinary names in any script, with accents, apostrophes and inner spaces, are accepted", async () => {
    const org = await crmOrg(t, "ctlok");
    for (const name of ["Zoë O'Brien-Smith", "Ålesund Fisk AS", "李小龍", "محمد علي", "Ünïcödé & Co. (Ltd.)"]) {
      expect((await org.call("POST", "/accounts", { name })).status).toBe(201);
      expect((await t.json("PATCH", `/api/v1/users/${org.user.id}`, { token: org.token, body: { full_name: name } })).status).toBe(200);
    }
  });

  test("deal notes keep line breaks and tabs, but not a NUL or another C0 control", async () => {
    const org = await crmOrg(t, "ctlnotes");
    const account = await org.account("Acme");
    const notes = "Call back Monday.\r\n\t- bring the contract\nThanks";
    expect((await org.deal({ title: "Notes", account_id: account.id, notes })).notes).toBe(notes);
    for (const bad of ["a\u0000b", "a\u0007b", "a\u001bb", "a\u007fb"]) {
      const r = await org.call("POST", "/deals", { title: "x", account_id: account.id, notes: bad });
      expect(r.status).toBe(422);
      expect(itemsOf(r.body)).toEqual([[["body", "notes"], "string_pattern_mismatch"]]);
    }
  });
});

describe("searches with control characters", () => {
  test("deals, accounts, contacts and members: %00, a newline and a bidi override are 422 at query.search, never a 500", async () => {
    const org = await crmOrg(t, "ctlsearch");
    const account = await org.account("Acme");
    await org.contact("Grace", "Hopper");
    await org.deal({ title: "Deal", account_id: account.id });
    for (const path of [`${CRM}/deals`, `${CRM}/accounts`, `${CRM}/contacts`, "/api/v1/users"]) {
      for (const value of ["%00", "a%00b", "%0A", "x%0Dy", "%09", "%E2%80%AE", "%C2%85", "%7F"]) {
        const r = await t.json("GET", `${path}?search=${value}`, { token: org.token });
        expect({ path, value, status: r.status }).toEqual({ path, value, status: 422 });
        expect(r.body.detail).toEqual([expect.objectContaining({ loc: ["query", "search"], type: "string_pattern_mismatch" })]);
      }
      // A plain search still answers.
      expect((await t.json("GET", `${path}?search=a`, { token: org.token })).status).toBe(200);
    }
  });
});
