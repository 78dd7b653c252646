// Deals at the API's length limits, with text that compresses poorly: 10,000 characters of notes
// (random letters and digits, or random 3-byte characters) and title, account and contact names at
// their maxima in 3-byte characters. Each is stored (201), changed (200) and found by a search for
// a word near the end of its notes, with the exact total, on both backends: PostgreSQL once
// answered 500 here, its B-tree indexes carrying the whole search text ("index row requires 10056
// bytes, maximum size is 8191"; docs/decisions.md).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomSource } from "../../src/crm/demo-data";
import { testApp } from "../helpers";
import { type CrmOrg, crmOrg } from "./support";

const t = testApp();
let org: CrmOrg;
afterAll(() => t.close());

const r = randomSource("long text deals");
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/** Random letters and digits: no word of the searches below (they hold "~"). */
const alnum = (n: number): string => Array.from({ length: n }, () => ALNUM[r.int(ALNUM.length)]).join("");
/** Random CJK ideographs (U+4E00-U+9FFF): 3 bytes each in UTF-8, one UTF-16 unit each (the API counts those). */
const cjk = (n: number): string => Array.from({ length: n }, () => String.fromCodePoint(0x4e00 + r.int(0x5200))).join("");

/** Notes of exactly 10,000 characters, `word` in them 40 characters before the end. */
const notesWith = (fill: (n: number) => string, word: string): string => fill(10_000 - 40 - word.length) + word + fill(40);

beforeAll(async () => {
  org = await crmOrg(t, "longtextorg");
});

const search = (term: string) => org.list(`search=${encodeURIComponent(term)}&size=100`);

describe("deals at the length limits, text compressing poorly", () => {
  test("10,000 characters of random letters and digits: created, updated, found by a word near the end", async () => {
    const account = await org.account("Short Account");
    const created = await org.call("POST", "/deals", { title: "Long notes", account_id: account.id, notes: notesWith(alnum, "~alnumfirst~") });
    expect(created.status).toBe(201);
    expect((await search("~alnumfirst~")).total).toBe(1);
    const updated = await org.call("PATCH", `/deals/${created.body.id}`, { notes: notesWith(alnum, "~alnumsecond~") });
    expect(updated.status).toBe(200);
    const page = await search("~alnumsecond~");
    expect(page.total).toBe(1);
    expect(page.items.map((d: { id: string }) => d.id)).toEqual([created.body.id]);
    expect((await search("~alnumfirst~")).total).toBe(0);
  });

  test("title, account and contact names at their maxima in 3-byte characters, 10,000 characters of them in the notes", async () => {
    const account = await org.account(cjk(200));
    const contact = await org.contact(cjk(100), cjk(100), { account_id: account.id });
    const body = { title: cjk(200), account_id: account.id, contact_id: contact.id };
    const bare = await org.call("POST", "/deals", body);
    expect(bare.status).toBe(201);
    const created = await org.call("POST", "/deals", { ...body, notes: notesWith(cjk, "~widefirst~") });
    expect(created.status).toBe(201);
    const found = await search("~widefirst~");
    expect(found.total).toBe(1);
    expect(found.items[0].id).toBe(created.body.id);
    const updated = await org.call("PATCH", `/deals/${bare.body.id}`, { title: cjk(200), notes: notesWith(cjk, "~widesecond~") });
    expect(updated.status).toBe(200);
    const page = await search("~widesecond~");
    expect(page.total).toBe(1);
    expect(page.items[0].id).toBe(bare.body.id);
    // A term of one character is counted by the gram counters: the deal's own characters are found.
    const last = [...updated.body.notes].at(-1)!;
    const one = await search(last);
    expect(one.items.map((d: { id: string }) => d.id)).toContain(bare.body.id);
  });

  test("renaming the account rewrites the deals' search text: a longer name in 3-byte characters is stored", async () => {
    const account = await org.account("Renamed Later");
    const deal = await org.deal({ title: cjk(200), account_id: account.id, notes: notesWith(cjk, "~renamed~") });
    const renamed = await org.call("PATCH", `/accounts/${account.id}`, { name: cjk(200) });
    expect(renamed.status).toBe(200);
    const page = await search("~renamed~");
    expect(page.total).toBe(1);
    expect(page.items[0].id).toBe(deal.id);
    expect(page.items[0].account_name).toBe(renamed.body.name);
  });
});
