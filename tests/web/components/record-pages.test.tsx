import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { installDom, typeInto, until } from "./crm-dom";

// The account and contact pages in happy-dom with a fake server: the record, its contacts and its
// deals (the lists filtered by the record's id, each a link to its page) and its timeline; a
// field edited in place sends that field alone, reloads the timeline, and a refused value shows
// its sentence beside the field.

const dom = installDom("http://acme.localhost/accounts/a1");
afterAll(() => dom.restore());

const { render } = await import("preact");
const { default: AccountPage } = await import("../../../web/record-pages/account-page");
const { default: ContactPage } = await import("../../../web/record-pages/contact-page");

const account = { id: "a1", tenant_id: "t", name: "Globex", domain: "globex.test", industry: null, created_at: "2030-01-01T00:00:00Z", updated_at: "2030-01-01T00:00:00Z" };
const contact = { id: "c1", tenant_id: "t", first_name: "Hank", last_name: "Scorpio", name: "Hank Scorpio", email: "hank@globex.test", phone: null, account_id: "a1", created_at: "2030-01-01T00:00:00Z", updated_at: "2030-01-01T00:00:00Z" };
const deal = (id: string, title: string) => ({
  id, tenant_id: "t", title, account_id: "a1", created_at: "", updated_at: "", value: "1234.50", currency: "EUR", stage: "new", close_date: null, probability: null,
  assigned_to: null, notes: null, custom_data: null, contact_id: "c1", pipeline_stage_id: "s1", pipeline_stage_name: "New", pipeline_stage_color: "#64748b",
  is_won: false, is_lost: false, account_name: "Globex", contact_name: "Hank Scorpio", assignee_name: null, assignee_email: null, stage_changed_at: null,
});
const page = <T,>(items: T[]) => ({ items, total: items.length, page: 1, size: 20, pages: items.length ? 1 : 0 });
const actor = { id: "u1", name: "Mia Member" };
const created = { id: "e1", type: "created", created_at: "2030-01-01T00:00:00Z", actor, data: { name: "Globex", domain: "globex.test", industry: null } };
const renamed = { id: "e2", type: "updated", created_at: "2030-01-02T00:00:00Z", actor, data: { changes: [{ field: "name", before: "Globex", after: "Globex Corp" }] } };
const texts = (sel: string) => [...document.querySelectorAll(sel)].map((e) => e.textContent?.trim());
const links = () => [...document.querySelectorAll<HTMLAnchorElement>("a")].map((a) => [a.textContent?.trim(), a.getAttribute("href")]);
const button = (name: string) => [...document.querySelectorAll<HTMLButtonElement>("button")].find((b) => b.textContent?.replace(/\s+/g, " ").trim() === name)!;

afterEach(() => render(null, dom.root));
/** A turn for the typed text's render, as a person's click comes after it. */
const rendered = () => new Promise((r) => setTimeout(r, 10));

describe("an account's page", () => {
  test("its fields, contacts, deals and timeline; a name edited in place; a refused one said beside the field", async () => {
    render(<AccountPage id="a1" />, dom.root);
    await until(() => dom.pending("/crm/accounts/a1").length > 0, "the account");
    dom.pending("/crm/accounts/a1")[0]!.respond(200, account);
    await until(() => dom.pending("/crm/contacts").length > 0 && dom.pending("/crm/deals").length > 0 && dom.pending("/crm/accounts/a1/activities").length > 0, "its lists");
    const contacts = dom.pending("/crm/contacts")[0]!;
    expect(contacts.url.searchParams.get("account_id")).toBe("a1");
    contacts.respond(200, page([contact]));
    const deals = dom.pending("/crm/deals")[0]!;
    expect(deals.url.searchParams.get("account_id")).toBe("a1");
    expect(deals.url.searchParams.get("contact_id")).toBeNull();
    deals.respond(200, page([deal("d1", "Globex rollout"), deal("d2", "Globex pilot")]));
    dom.pending("/crm/accounts/a1/activities")[0]!.respond(200, page([created]));
    await until(() => texts(".timeline .entry").length === 1 && texts(".record-list td.title").length === 2, "the lists shown");
    expect(document.querySelector("h1")!.textContent).toBe("Globex");
    expect(links()).toContainEqual(["Hank Scorpio", "/contacts/c1"]);
    expect(links()).toContainEqual(["Globex rollout", "/deals/d1"]);
    expect(links().filter(([, href]) => href === "/contacts/c1").length).toBe(3);
    expect(texts(".record-list .muted.small")).toEqual(["2 deals"]);
    expect(texts(".timeline .entry p")[0]).toBe("Mia Member created the account.");

    // Edit the name in place: the PATCH carries the name alone; the timeline is read again.
    button("Edit name").click();
    await until(() => document.querySelector<HTMLInputElement>(".inline-field.editing input") !== null, "the editor");
    const input = document.querySelector<HTMLInputElement>(".inline-field.editing input")!;
    expect(input.value).toBe("Globex");
    typeInto(input, "");
    await rendered();
    button("Save name").click();
    await until(() => dom.pending("/crm/accounts/a1").some((c) => c.method === "PATCH"), "the PATCH");
    const refused = dom.pending("/crm/accounts/a1").find((c) => c.method === "PATCH")!;
    expect(refused.body).toEqual({ name: "" });
    refused.respond(422, { detail: [{ loc: ["body", "name"], msg: "String should have at least 1 character", type: "string_too_short", input: "" }] });
    await until(() => document.querySelector(".inline-field.editing .error") !== null, "the error beside the field");
    expect(document.querySelector(".inline-field.editing .error")!.textContent).not.toContain("String should have");
    typeInto(document.querySelector<HTMLInputElement>(".inline-field.editing input")!, "Globex Corp");
    await rendered();
    button("Save name").click();
    await until(() => dom.pending("/crm/accounts/a1").some((c) => c.method === "PATCH"), "the second PATCH");
    const patch = dom.pending("/crm/accounts/a1").find((c) => c.method === "PATCH")!;
    expect(patch.body).toEqual({ name: "Globex Corp" });
    patch.respond(200, { ...account, name: "Globex Corp" });
    await until(() => document.querySelector("h1")!.textContent === "Globex Corp", "the new name");
    await until(() => dom.pending("/crm/accounts/a1/activities").length > 0, "the timeline read again");
    dom.pending("/crm/accounts/a1/activities")[0]!.respond(200, page([renamed, created]));
    await until(() => texts(".timeline .entry").length === 2, "the new entry");
    expect(texts(".timeline .changes li")).toEqual(["Name: Globex → Globex Corp"]);
  });

  test("an account without contacts or deals says how to add them", async () => {
    render(<AccountPage id="a1" />, dom.root);
    await until(() => dom.pending("/crm/accounts/a1").length > 0, "the account");
    dom.pending("/crm/accounts/a1")[0]!.respond(200, account);
    await until(() => dom.pending("/crm/contacts").length > 0 && dom.pending("/crm/deals").length > 0, "its lists");
    dom.pending("/crm/contacts")[0]!.respond(200, page([]));
    dom.pending("/crm/deals")[0]!.respond(200, page([]));
    await until(() => texts(".record-list p.muted").length === 2, "the empty lists");
    expect(texts(".record-list p.muted")).toEqual([
      "Nobody at Globex yet. Add a contact on the Contacts screen and choose this account in it.",
      "Globex has no deals yet. To add one, create a deal on the Deals screen and choose this account in it.",
    ]);
  });
});

describe("a contact's page", () => {
  test("its account linked, its deals by contact_id, its timeline; an email edited in place", async () => {
    render(<ContactPage id="c1" />, dom.root);
    await until(() => dom.pending("/crm/contacts/c1").length > 0, "the contact");
    dom.pending("/crm/contacts/c1")[0]!.respond(200, contact);
    await until(() => dom.pending("/crm/accounts/a1").length > 0 && dom.pending("/crm/deals").length > 0 && dom.pending("/crm/contacts/c1/activities").length > 0, "its account and lists");
    dom.pending("/crm/accounts/a1")[0]!.respond(200, account);
    const deals = dom.pending("/crm/deals")[0]!;
    expect(deals.url.searchParams.get("contact_id")).toBe("c1");
    deals.respond(200, page([deal("d1", "Globex rollout")]));
    const entry = { id: "e1", type: "created", created_at: "2030-01-01T00:00:00Z", actor, data: { first_name: "Hank", last_name: "Scorpio", email: null, phone: null, account: "Globex", account_id: "a1" } };
    const imported = { id: "e2", type: "imported", created_at: "2030-01-02T00:00:00Z", actor, data: { job_id: "j1", action: "updated", changes: [{ field: "account", before: null, after: null, before_id: "a0", after_id: "a1" }, { field: "phone", before: null, after: "555" }] } };
    dom.pending("/crm/contacts/c1/activities")[0]!.respond(200, page([imported, entry]));
    await until(() => texts(".timeline .entry").length === 2 && texts(".record-list td.title").length === 1, "the lists shown");
    // An import's entry: its changes, a contact's account (named by ids only) said to have changed.
    expect(texts(".timeline .entry.imported p")).toEqual(["Mia Member changed it with an import:"]);
    expect(texts(".timeline .entry.imported li")).toEqual(["Account changed", "Phone: none → 555"]);
    expect(document.querySelector("h1")!.textContent).toBe("Hank Scorpio");
    expect(document.querySelector(".stage-line")!.textContent).toBe("Contact at Globex");
    expect(links().filter(([, href]) => href === "/accounts/a1").length).toBe(3);
    expect(texts(".timeline .entry.created p")[0]).toBe("Mia Member created the contact at Globex.");

    button("Edit email").click();
    await until(() => document.querySelector<HTMLInputElement>(".inline-field.editing input") !== null, "the editor");
    typeInto(document.querySelector<HTMLInputElement>(".inline-field.editing input")!, "  ");
    await rendered();
    button("Save email").click();
    await until(() => dom.pending("/crm/contacts/c1").some((c) => c.method === "PATCH"), "the PATCH");
    const patch = dom.pending("/crm/contacts/c1").find((c) => c.method === "PATCH")!;
    // A blank optional field is sent as none.
    expect(patch.body).toEqual({ email: null });
    patch.respond(200, { ...contact, email: null });
    await until(() => document.querySelector(".inline-field.editing") === null, "the editor closed");
  });
});
