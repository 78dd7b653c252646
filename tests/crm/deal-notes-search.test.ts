import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_NOTE_TEXT } from "../../src/crm/model";
import type { Db } from "../../src/db/database";
import { recountDealGrams } from "../../src/db/deal-grams";
import { foldAll } from "../../src/db/search-fold";
import { foldAll as pgFoldAll } from "../../src/stores/postgres/search-fold";
import type { Pg } from "../../src/stores/postgres/database";
import { rebuildDealCounters } from "../../src/stores/postgres/deal-counters";
import { testApp } from "../helpers";
import { testSql } from "../support/sql";
import { type CrmOrg, crmOrg } from "./support";

// The deal search finds a deal by its notes (issue 32): the list (every order, 1-, 2- and 3+
// letter terms, exact totals), the board, after edits and deletes of notes, within the newest
// 20,000 characters of them, after renames and a bulk delete's undo, never in another organization.

// A clock that moves on each reading: notes made one after another are newest in that order.
let clock = Date.now();
const t = testApp({ now: () => (clock += 3) });
let org: CrmOrg;
let other: CrmOrg;
let account: { id: string; name: string };

type Found = { total: number; ids: string[] };
const enc = encodeURIComponent;
async function found(o: CrmOrg, term: string, more = ""): Promise<Found> {
  const r = await o.list(`search=${enc(term)}&size=100${more}`);
  return { total: r.total, ids: (r.items as Array<{ id: string }>).map((d) => d.id).sort() };
}
const boardTotal = async (o: CrmOrg, term: string, group: "stage" | "assigned_to" = "stage"): Promise<number> =>
  (await o.ok("GET", `/deals/summary?search=${enc(term)}&group_by=${group}`)).total;
const note = async (o: CrmOrg, dealId: string, body: string): Promise<{ id: string }> => o.ok("POST", `/deals/${dealId}/notes`, { body });

// The list's page strategies differ by order and filters: each must find the same deals.
const ORDERS = ["", "&sort_by=title", "&sort_by=value&sort_dir=desc", "&sort_by=account_name&sort_dir=asc", "&sort_by=updated_at", "&stage=new", "&stage=new&sort_by=title"];

/** Every order of the list and both groupings of the board find exactly `ids` for `term`. */
async function expectFound(o: CrmOrg, term: string, ids: string[]): Promise<void> {
  const want = { total: ids.length, ids: [...ids].sort() };
  for (const order of ORDERS) expect({ term, order, ...(await found(o, term, order)) }).toEqual({ term, order, ...want });
  expect(await boardTotal(o, term)).toBe(ids.length);
  expect(await boardTotal(o, term, "assigned_to")).toBe(ids.length);
}

beforeAll(async () => {
  org = await crmOrg(t, "notesearch");
  other = await crmOrg(t, "notesother");
  account = await org.account("Acme Holdings");
  // Deals that match none of the terms below, so that every total counts what the notes add.
  for (let i = 0; i < 3; i++) await org.deal({ title: `Plain ${i}`, account_id: account.id, value: String(10 * i) });
  // Another organization with the same notes on its own deal (its search is its own).
  const theirs = await other.deal({ title: "Theirs", account_id: (await other.account("Other Co")).id });
  await note(other, theirs.id, "Ж wombatnote ΨΩ platypusnote");
});
afterAll(() => t.close());

describe("a deal's notes in the deal search", () => {
  test("a note's words find its deal: 1, 2 and 3+ letter terms, any case, every order and the board; the deal's updated_at and timeline stay", async () => {
    const d = await org.deal({ title: "Quiet", account_id: account.id });
    const before = await org.ok("GET", `/deals/${d.id}`);
    for (const term of ["ж", "ψω", "quokkanote", "QUOKKA", "kkano"]) await expectFound(org, term, []);
    await note(org, d.id, "Called: Ж said quokkanote, ΨΩ.");
    for (const term of ["ж", "Ж", "ψω", "ΨΩ", "quokkanote", "QUOKKA", "kkano", "said quo"]) await expectFound(org, term, [d.id]);
    const after = await org.ok("GET", `/deals/${d.id}`);
    expect(after.updated_at).toBe(before.updated_at);
    expect((await org.ok("GET", `/deals/${d.id}/activities`)).items.map((e: { type: string }) => e.type)).toEqual(["note", "created"]);
    // Another organization's search finds its own deal only.
    expect((await found(other, "quokkanote")).total).toBe(0);
  });

  test("editing the note's word away un-finds the deal; deleting the note un-finds it", async () => {
    const d = await org.deal({ title: "Editable", account_id: account.id });
    const n = await note(org, d.id, "echidnanote and ϡ");
    await expectFound(org, "echidnanote", [d.id]);
    await expectFound(org, "ϡ", [d.id]);
    await org.ok("PATCH", `/notes/${n.id}`, { body: "numbatnote and ϡ" });
    await expectFound(org, "echidnanote", []);
    await expectFound(org, "numbatnote", [d.id]);
    await expectFound(org, "ϡ", [d.id]);
    expect((await org.call("DELETE", `/notes/${n.id}`)).status).toBe(204);
    for (const term of ["numbatnote", "ϡ"]) await expectFound(org, term, []);
    // Its text is as a deal's that never had notes.
    const row = await testSql(t.ctx).get<{ note_text: string; search_text: string }>("SELECT note_text, search_text FROM deals WHERE tenant_id = ? AND id = ?", org.tenant.id, d.id);
    expect(row).toEqual({ note_text: "", search_text: "editable\n\nacme holdings\n" });
  });

  test("a deal matched by its title, its notes field and a note counts once", async () => {
    const d = await org.deal({ title: "Zebranote deal", account_id: account.id, notes: "zebranote in the field" });
    await note(org, d.id, "zebranote again");
    await note(org, d.id, "and zebranote once more");
    for (const term of ["zebranote", "zebra", "ze", "eb"]) {
      const r = await found(org, term);
      expect(r.ids.filter((id) => id === d.id)).toEqual([d.id]);
    }
    await expectFound(org, "zebranote", [d.id]);
  });

  test(`the newest ${MAX_NOTE_TEXT.toLocaleString("en")} characters of a deal's notes are searched; the text stays bounded`, async () => {
    const d = await org.deal({ title: "Chatty", account_id: account.id });
    const body = (marker: string) => `${marker} ${"lorem ipsum dolor ".repeat(600)}`.slice(0, 9_000);
    await note(org, d.id, body("oldestmarker"));
    await note(org, d.id, body("firstmarker"));
    await note(org, d.id, body("secondmarker"));
    await note(org, d.id, body("thirdmarker"));
    // Newest first: third (9,000) + second (9,000) + the first 1,998 characters of the first note.
    for (const m of ["thirdmarker", "secondmarker", "firstmarker"]) await expectFound(org, m, [d.id]);
    await expectFound(org, "oldestmarker", []);
    const sql = testSql(t.ctx);
    const length = async () => (await sql.get<{ n: number }>("SELECT length(note_text) AS n FROM deals WHERE tenant_id = ? AND id = ?", org.tenant.id, d.id))!.n;
    expect(Number(await length())).toBe(MAX_NOTE_TEXT);
    // Many more notes: still bounded, the newest found, the oldest not.
    for (let i = 0; i < 6; i++) await note(org, d.id, body(`more${"abcdef"[i]}marker`));
    expect(Number(await length())).toBe(MAX_NOTE_TEXT);
    await expectFound(org, "moref", [d.id]);
    await expectFound(org, "secondmarker", []);
  });

  test("many short notes: the newest that fit in the bound are found, read past the first few", async () => {
    const d = await org.deal({ title: "Many notes", account_id: account.id });
    // 30 notes of 1,000 characters: newest first, note k starts at k × 1,001, so the 20 newest are in.
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push((await note(org, d.id, `zq${i}zq ${"dolor sit ".repeat(100)}`.slice(0, 1_000))).id);
    for (const i of [29, 20, 13, 10]) await expectFound(org, `zq${i}zq`, [d.id]);
    for (const i of [9, 0]) await expectFound(org, `zq${i}zq`, []);
    // The newest gone: one more older note is in.
    expect((await org.call("DELETE", `/notes/${ids[29]}`)).status).toBe(204);
    await expectFound(org, "zq29zq", []);
    await expectFound(org, "zq9zq", [d.id]);
    await expectFound(org, "zq8zq", []);
  });

  test("the bound follows the notes' writes: deleting a newer note brings an older one back, lengthening one pushes it out", async () => {
    const d = await org.deal({ title: "Layered", account_id: account.id });
    const body = (marker: string) => `${marker} ${"sit amet consectetur ".repeat(500)}`.slice(0, 9_000);
    await note(org, d.id, body("bottommarker"));
    const middle = await note(org, d.id, body("middlemarker"));
    const a = await note(org, d.id, body("upperamarker"));
    const b = await note(org, d.id, body("upperbmarker"));
    await expectFound(org, "bottommarker", []);
    expect((await org.call("DELETE", `/notes/${b.id}`)).status).toBe(204);
    // upper a (9,000) + middle (9,000): the bottom note's first 1,998 characters are in.
    await expectFound(org, "bottommarker", [d.id]);
    await org.ok("PATCH", `/notes/${a.id}`, { body: `${body("upperamarker")}${"x".repeat(1_000)}` });
    await expectFound(org, "bottommarker", [d.id]);
    // 10,000 + 1 + 10,000: nothing of the bottom note is left.
    await org.ok("PATCH", `/notes/${middle.id}`, { body: `${body("middlemarker")}${"y".repeat(1_000)}` });
    await expectFound(org, "bottommarker", []);
    await expectFound(org, "middlemarker", [d.id]);
  });

  test("renaming the account or the contact, and changing the deal, keep its notes found", async () => {
    const acc = await org.account("Renamable Ltd");
    const contact = await org.contact("Rena", "Mable", { account_id: acc.id });
    const d = await org.deal({ title: "Renamed around", account_id: acc.id, contact_id: contact.id });
    await note(org, d.id, "platypusnote from the call");
    await org.ok("PATCH", `/accounts/${acc.id}`, { name: "Freshname Co" });
    await expectFound(org, "platypusnote", [d.id]);
    await expectFound(org, "freshname", [d.id]);
    await org.ok("PATCH", `/contacts/${contact.id}`, { last_name: "Newlast" });
    await expectFound(org, "platypusnote", [d.id]);
    await expectFound(org, "newlast", [d.id]);
    await org.ok("PATCH", `/deals/${d.id}`, { title: "Retitled", value: "12.50" });
    await expectFound(org, "platypusnote", [d.id]);
    await expectFound(org, "retitled", [d.id]);
    // Losing the contact keeps them too.
    expect((await org.call("DELETE", `/contacts/${contact.id}`)).status).toBe(204);
    await expectFound(org, "platypusnote", [d.id]);
    await expectFound(org, "newlast", []);
  });

  test("a bulk delete takes the deal out of the search; its undo brings it back found by its notes", async () => {
    const d = await org.deal({ title: "Doomed", account_id: account.id });
    await note(org, d.id, "wombatnote first");
    await note(org, d.id, "then ѯ");
    await expectFound(org, "wombatnote", [d.id]);
    const wait = async (id: string) => {
      for (let i = 0; i < 2000; i++) {
        const j = await org.ok("GET", `/jobs/${id}`);
        if (j.status !== "running") return j;
        await Bun.sleep(5);
      }
      throw new Error("still running");
    };
    const job = await wait((await org.ok("POST", "/deals/bulk", { ids: [d.id], delete: true }, 202)).id);
    expect(job.status).toBe("succeeded");
    for (const term of ["wombatnote", "ѯ"]) await expectFound(org, term, []);
    const undo = await wait((await org.ok("POST", `/jobs/${job.id}/undo`, undefined, 202)).id);
    expect(undo.status).toBe("succeeded");
    for (const term of ["wombatnote", "ѯ"]) await expectFound(org, term, [d.id]);
    // And its notes are still its own: deleting one un-finds its word.
    const notes = (await org.ok("GET", `/deals/${d.id}/activities`)).items.filter((e: { type: string }) => e.type === "note");
    const wombat = notes.find((e: { data: { note: { body: string } } }) => e.data.note.body.includes("wombat"));
    expect((await org.call("DELETE", `/notes/${wombat.id}`)).status).toBe(204);
    await expectFound(org, "wombatnote", []);
    await expectFound(org, "ѯ", [d.id]);
  });

  test("another organization's search never finds a deal by this organization's notes, nor the other way", async () => {
    const d = await org.deal({ title: "Ours", account_id: account.id });
    await note(org, d.id, "koalanote");
    await expectFound(org, "koalanote", [d.id]);
    for (const term of ["koalanote", "koala"]) {
      expect((await found(other, term)).total).toBe(0);
      expect(await boardTotal(other, term)).toBe(0);
    }
    // Their note's words are theirs: this organization finds none of them.
    for (const term of ["wombatnote", "platypusnote"]) expect((await found(other, term)).total).toBe(1);
    expect((await found(org, "Ж wombatnote")).total).toBe(0);
  });

  test("an import that changes the deal keeps its notes found; the same file again changes nothing", async () => {
    const d = await org.deal({ title: "Importable", account_id: account.id });
    await note(org, d.id, "dingonote on file");
    const csv = `id,title,account_name,value\n${d.id},Reimported title,Acme Holdings,7.00\n`;
    const run = async () => {
      const r = await t.json("POST", "/api/v1/crm/deals/import", { token: org.token, raw: csv, headers: { "content-type": "text/csv" } });
      expect(r.status).toBe(202);
      for (let i = 0; i < 2000; i++) {
        const j = await org.ok("GET", `/jobs/${r.body.id}`);
        if (j.status !== "running") return j;
        await Bun.sleep(5);
      }
      throw new Error("still running");
    };
    expect(await run()).toMatchObject({ status: "succeeded", updated: 1, added: 0 });
    await expectFound(org, "dingonote", [d.id]);
    await expectFound(org, "reimported", [d.id]);
    expect(await run()).toMatchObject({ status: "succeeded", updated: 0, unchanged: 1 });
    await expectFound(org, "dingonote", [d.id]);
  });

  // Last: after every note write above (the PostgreSQL note writes count their grams in JS).
  test("the search's gram counters equal a recount from the deals after all these note writes", async () => {
    const ctx = t.ctx as { db?: Db; pg?: Pg };
    const sql = testSql(t.ctx);
    if (ctx.db) foldAll(ctx.db);
    else await pgFoldAll(ctx.pg!);
    const read = async () =>
      (await sql.all<{ gram: string; stage: string; assignee: string; n: number }>(
        "SELECT gram, stage, assignee, n FROM deal_gram_counts WHERE tenant_id = ? AND n <> 0 ORDER BY gram, stage, assignee", org.tenant.id,
      )).map((r) => `${r.gram}|${r.stage}|${r.assignee}|${Number(r.n)}`);
    const live = await read();
    expect(live.length).toBeGreaterThan(200);
    if (ctx.pg) await rebuildDealCounters(ctx.pg, [org.tenant.id]);
    else ctx.db!.transaction(() => recountDealGrams(ctx.db!))();
    expect(await read()).toEqual(live);
  });
});
