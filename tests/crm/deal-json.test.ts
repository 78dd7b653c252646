import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { DealJoined } from "../../src/crm/deals-repo";
import { dealJson, toDealRead } from "../../src/crm/read";
import { readDealQuery } from "../../src/crm/routes";
import { pageJson, pageOf } from "../../src/http/paging";
import { testApp } from "../helpers";
import { type CrmOrg, crmOrg } from "./support";

/**
 * The deal list writes its JSON text directly (dealJson, pageJson) instead of JSON.stringify of
 * DealRead objects (issue 15). The text must be exactly what the generic serializer writes: same
 * fields, order, types and escaping.
 */

const base: DealJoined = {
  seq: 1,
  id: "0193a0b4-7c1e-7000-8000-000000000001",
  tenant_id: "0193a0b4-7c1e-7000-8000-0000000000aa",
  title: "Deal",
  account_id: "0193a0b4-7c1e-7000-8000-0000000000bb",
  contact_id: null,
  assigned_to: null,
  stage: "new",
  value_cents: 0,
  currency: "USD",
  close_date: null,
  probability: null,
  notes: null,
  custom_data: null,
  created_at: 1_763_942_400_000,
  updated_at: 1_763_942_400_001,
  account_name: "Acme",
  contact_name: null,
  assignee_name: null,
  assignee_email: null,
  stage_id: null,
  stage_name: null,
  stage_color: null,
  is_won: null,
  is_lost: null,
};

const same = (d: DealJoined) => expect(dealJson(d)).toBe(JSON.stringify(toDealRead(d)));

// Every character JSON.stringify escapes, and the ones around them it does not.
const controls = Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i)).join("");
const tricky = [
  "",
  '"',
  "\\",
  '\\"',
  controls,
  "\x7f\x80\xa0\xff",
  "\u2028\u2029",
  "Zürich Ærø naïve — “quoted” ‘single’",
  "日本語の取引 🚀👩‍💻",
  "\ud83d", // a lone high surrogate
  "\ude00", // a lone low surrogate
  "a\ud83d\ude00b\udfffc",
  "</script><script>alert(1)</script>",
  "tab\there\nnew line\r\n",
  "x".repeat(5000),
];

describe("dealJson is JSON.stringify(toDealRead(row))", () => {
  test("every text field with quotes, backslashes, controls, unicode, lone surrogates and empties", () => {
    const textFields = ["id", "tenant_id", "title", "account_id", "contact_id", "assigned_to", "stage", "currency", "close_date", "notes",
      "account_name", "contact_name", "assignee_name", "assignee_email", "stage_id", "stage_name", "stage_color"] as const;
    for (const field of textFields) for (const s of tricky) same({ ...base, [field]: s });
  });

  test("nulls, stage data present or missing, won and lost flags", () => {
    same(base);
    same({ ...base, stage_id: "s1", stage_name: "Won", stage_color: "#22c55e", is_won: 1, is_lost: 0 });
    same({ ...base, stage_id: "s2", stage_name: "Lost", stage_color: "#ef4444", is_won: 0, is_lost: 1 });
    same({ ...base, contact_id: "c", contact_name: "Ann Lee", assigned_to: "u", assignee_name: null, assignee_email: "u@x.test" });
  });

  test("money values, probabilities and dates", () => {
    for (const v of [0, 1, 9, 10, 99, 100, 101, 12_345, 100_000_000, 999_999_999_999_999, 2 ** 53 - 1]) same({ ...base, value_cents: v });
    for (const p of [null, 0, 1, 50, 99, 100]) same({ ...base, probability: p });
    for (const c of [null, "2026-01-31", "1999-12-31"]) same({ ...base, close_date: c });
    for (const at of [0, 1, 999, 86_399_999, 1_700_000_000_123, 253_402_300_799_999, -1, -62_167_219_200_000, 1.5]) {
      same({ ...base, created_at: at, updated_at: at });
    }
  });

  test("custom data of any shape is written as its parsed object", () => {
    const shapes: unknown[] = [{}, { a: 1 }, { "k\"ey": "v\\al\u0001ue", n: null, t: true, f: 1.25, big: 1e21, neg: -0 }, { nested: { list: [1, "two", { three: [] }], "日本": "🚀" } },
      { constructor: 1 }, { "\u2028": "\ud83d" }];
    for (const c of shapes) same({ ...base, custom_data: JSON.stringify(c) });
    // Text stored with spaces or another key order (an import, another backend) comes out as its object would.
    same({ ...base, custom_data: '{ "b" : 2 , "a" : [ 1 , 2 ] }' });
    same({ ...base, custom_data: '{"__proto__":"x","a":"\\u00e9\\ud83d"}' });
  });

  test("random deals from a pool of awkward characters", () => {
    const pool = [...'ab"\\\n\t\x00\x1f\x7f é日🚀\u2028', "\ud800", "\udfff"];
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const text = () => Array.from({ length: rnd(12) }, () => pool[rnd(pool.length)]).join("");
    const maybe = () => (rnd(3) === 0 ? null : text());
    for (let i = 0; i < 2000; i++) {
      same({
        ...base,
        title: text(),
        notes: maybe(),
        account_name: text(),
        contact_name: maybe(),
        assignee_name: maybe(),
        assignee_email: maybe(),
        stage: text(),
        stage_name: maybe(),
        value_cents: rnd(1_000_000_000),
        probability: rnd(2) ? rnd(101) : null,
        custom_data: rnd(2) ? JSON.stringify({ [text()]: text(), n: rnd(1000) }) : null,
        is_won: rnd(2),
        is_lost: rnd(2),
      });
    }
  });

  test("pageJson is JSON.stringify(pageOf(...)), empty pages and past-the-end pages too", () => {
    const deals = [base, { ...base, id: "b", title: 'q"uote' }].map((d) => [d, toDealRead(d)] as const);
    for (const [total, page, size] of [[0, 1, 20], [2, 1, 20], [2, 5, 20], [101, 6, 20], [1_000_000, 1, 100]] as const) {
      for (const n of [0, 1, 2]) {
        const picked = deals.slice(0, n);
        expect(pageJson(picked.map(([d]) => dealJson(d)), total, page, size)).toBe(JSON.stringify(pageOf(picked.map(([, r]) => r), total, page, size)));
      }
    }
  });
});

describe("GET /crm/deals answers exactly what the object serializer writes", () => {
  const t = testApp();
  let org: CrmOrg;
  beforeAll(async () => {
    org = await crmOrg(t, "dealjson");
    const account = await org.account('Ünïcode "Account" \\ 日本');
    const contact = await org.contact("Zoë", "O'Brien \"Jr\"", { account_id: account.id });
    const values = ["0", "0.01", "1", "99.99", "1234567.5", "9999999999999.99"];
    for (let i = 0; i < values.length; i++) {
      await org.deal({
        title: `Deal ${i} "quoted" \\ back — 🚀 ${"é".repeat(i)}`,
        account_id: account.id,
        contact_id: i % 2 ? contact.id : null,
        assigned_to: i % 3 ? org.user.id : null,
        value: values[i],
        stage: ["new", "qualified", "won", "lost"][i % 4],
        close_date: i % 2 ? "2026-12-31" : null,
        probability: i % 2 ? i * 10 : null,
        notes: i % 2 ? `line one\nline two\t"tab" \\ \u2028 日本` : null,
        custom_data: i % 2 ? { k: "v\"\\", nested: { list: [1, null, true] }, "日本": "🚀" } : null,
      });
    }
  });
  afterAll(() => t.close());

  for (const query of ["", "size=3", "page=2&size=4", "sort_by=value&sort_dir=asc", "sort_by=title", "stage=won&stage=lost", "mine=true", "unassigned=true", "search=deal", "page=50"]) {
    test(`?${query}`, async () => {
      const url = `/api/v1/crm/deals${query ? `?${query}` : ""}`;
      const res = await t.request("GET", url, { token: org.token });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json");
      const text = await res.text();
      const auth = await t.ctx.auth.authenticate(org.token);
      const reference = JSON.stringify(await t.ctx.deals.list(auth, readDealQuery(`http://localhost${url}`)));
      expect(text).toBe(reference);
      if (query === "") expect(JSON.parse(text).total).toBe(6);
    });
  }
});
