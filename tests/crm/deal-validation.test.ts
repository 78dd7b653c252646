import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testApp } from "../helpers";
import { type CrmOrg, crmOrg, items422 } from "./support";

const t = testApp();
let org: CrmOrg;
let account: { id: string };

beforeAll(async () => {
  org = await crmOrg(t, "valuesorg");
  account = await org.account("Acme");
});
afterAll(() => t.close());

const post = (body: Record<string, unknown>) => org.call("POST", "/deals", body);

describe("exact decimal value", () => {
  const cases: Array<[unknown, string]> = [
    ["1234.5", "1234.50"],
    [1234.5, "1234.50"],
    [0.1, "0.10"],
    ["0.1", "0.10"],
    [0.29, "0.29"],
    [1.15, "1.15"],
    ["9999999999999.99", "9999999999999.99"],
    [9999999999999.99, "9999999999999.99"],
    [1234567890123.45, "1234567890123.45"],
    ["0", "0.00"],
    [0, "0.00"],
    ["007.50", "7.50"],
    ["1.500", "1.50"],
    [100, "100.00"],
  ];
  for (const [input, answer] of cases) {
    test(`${JSON.stringify(input)} → "${answer}", and back unchanged`, async () => {
      const d = await org.deal({ title: "v", account_id: account.id, value: input });
      expect(d.value).toBe(answer);
      expect((await org.ok("GET", `/deals/${d.id}`)).value).toBe(answer);
      const again = await org.ok("PATCH", `/deals/${d.id}`, { value: d.value });
      expect(again.value).toBe(answer);
    });
  }

  test("raw JSON number text is read exactly", async () => {
    const r = await t.json("POST", "/api/v1/crm/deals", {
      token: org.token,
      raw: `{"title":"raw","account_id":"${account.id}","value":9007199254740.99}`,
      headers: { "content-type": "application/json" },
    });
    expect(r.status).toBe(201);
    expect(r.body.value).toBe("9007199254740.99");
  });

  for (const bad of ["1.234", 1.234, -1, "-0.5", "10000000000000", 1e13, "1e3", 1e21, "abc", "", " 1", "1,5", ".5", "0x10", 1e-7]) {
    test(`${JSON.stringify(bad)} is 422 at ["body","value"]`, async () => {
      const r = await post({ title: "v", account_id: account.id, value: bad });
      expect(r.status).toBe(422);
      expect(r.body.detail.map((i: { loc: unknown[] }) => i.loc)).toEqual([["body", "value"]]);
    });
  }

  test("a boolean or object value is string_type", async () => {
    const r = await post({ title: "v", account_id: account.id, value: true });
    expect(items422(r.body)).toEqual([{ loc: ["body", "value"], type: "string_type" }]);
  });
});

describe("validation: one item per failing field", () => {
  const check = async (body: Record<string, unknown>, expected: Array<[string, string]>) => {
    const r = await post(body);
    expect(r.status).toBe(422);
    expect(r.body.detail.map((i: { loc: unknown[]; type: string }) => [i.loc.slice(1).join("."), i.type])).toEqual(expected);
  };

  test("title and account_id are required", () => check({}, [["title", "missing"], ["account_id", "missing"]]));
  test("title: not empty, not blank, at most 200", async () => {
    await check({ title: "", account_id: "a" }, [["title", "string_too_short"]]);
    await check({ title: "   ", account_id: "a" }, [["title", "string_pattern_mismatch"]]);
    await check({ title: "x".repeat(201), account_id: "a" }, [["title", "string_too_long"]]);
    await check({ title: 5, account_id: "a" }, [["title", "string_type"]]);
  });
  test("currency: three upper-case letters", async () => {
    for (const c of ["usd", "US", "USDX", "U$D", ""]) await check({ title: "x", account_id: "a", currency: c }, [["currency", "string_pattern_mismatch"]]);
  });
  test("probability: an integer from 0 to 100", async () => {
    await check({ title: "x", account_id: "a", probability: -1 }, [["probability", "greater_than_equal"]]);
    await check({ title: "x", account_id: "a", probability: 101 }, [["probability", "less_than_equal"]]);
    await check({ title: "x", account_id: "a", probability: 50.5 }, [["probability", "int_from_float"]]);
  });
  test("close_date: a real calendar date", async () => {
    await check({ title: "x", account_id: "a", close_date: "2030-02-30" }, [["close_date", "value_error"]]);
    await check({ title: "x", account_id: "a", close_date: "tomorrow" }, [["close_date", "value_error"]]);
  });
  test("custom_data: a JSON object of at most 16 KiB", async () => {
    await check({ title: "x", account_id: account.id, custom_data: [1, 2] }, [["custom_data", "dict_type"]]);
    await check({ title: "x", account_id: account.id, custom_data: "text" }, [["custom_data", "dict_type"]]);
    await check({ title: "x", account_id: account.id, custom_data: { big: "x".repeat(16 * 1024) } }, [["custom_data", "value_error"]]);
    const fits = await org.deal({ title: "x", account_id: account.id, custom_data: { big: "é".repeat(4000) } });
    expect(fits.custom_data.big).toHaveLength(4000);
  });
  test("several bad fields at once", () =>
    check({ title: "", account_id: "a", currency: "x", probability: 200, value: "-1" }, [
      ["title", "string_too_short"],
      ["value", "value_error"],
      ["currency", "string_pattern_mismatch"],
      ["probability", "less_than_equal"],
    ]));
  test("a stage the tenant does not have is 422 literal_error naming its stages", async () => {
    const r = await post({ title: "x", account_id: account.id, stage: "archived" });
    expect(r.status).toBe(422);
    expect(r.body.detail[0]).toMatchObject({ loc: ["body", "stage"], type: "literal_error", input: "archived" });
    expect(r.body.detail[0].ctx.expected).toBe("'new', 'qualified', 'proposal', 'negotiation', 'won' or 'lost'");
  });
});


describe("integers sent as text (found by the bad-input fuzz: the item had lost its loc)", () => {
  test.each([["-1", "greater_than_equal"], ["-1.00", "greater_than_equal"], ["101", "less_than_equal"], ["5.5", "int_parsing"]])(
    "probability %p: 422 %s at body.probability",
    async (probability, type) => {
      const r = await post({ title: "T", account_id: account.id, probability });
      expect(r.status).toBe(422);
      expect((r.body as { detail: Array<{ loc: unknown[]; type: string }> }).detail.map((i) => [i.loc, i.type])).toEqual([[["body", "probability"], type]]);
    },
  );
  test("a stage's position and probability as text: 422 at their own loc", async () => {
    const r = await org.call("POST", "/pipeline-stages", { key: "textual", name: "Textual", color: "#112233", position: "-3", probability: "200" });
    expect(r.status).toBe(422);
    expect((r.body as { detail: Array<{ loc: unknown[] }> }).detail.map((i) => i.loc)).toEqual([["body", "position"], ["body", "probability"]]);
  });
  test("\"50\" is read as 50", async () => {
    const r = await post({ title: "T", account_id: account.id, probability: "50" });
    expect(r.status).toBe(201);
    expect((r.body as { probability: number }).probability).toBe(50);
  });
});

describe("currency: an ISO 4217 code", () => {
  test.each(["DOL", "ABC", "XYZ", "EUO"])("%p is three letters but no currency: 422 value_error at body.currency", async (currency) => {
    const r = await post({ title: "x", account_id: account.id, currency });
    expect(r.status).toBe(422);
    expect(items422(r.body)).toEqual([{ loc: ["body", "currency"], type: "value_error" }]);
    expect(r.body.detail[0].msg).toContain("ISO 4217");
  });
  test("a long word is refused whole, never cut to its first three letters", async () => {
    const r = await post({ title: "x", account_id: account.id, currency: "dollars" });
    expect(r.status).toBe(422);
    expect(r.body.detail.map((i: { loc: unknown[] }) => i.loc)).toEqual([["body", "currency"]]);
  });
  test.each(["USD", "EUR", "JPY", "CHF", "XAU"])("%p is accepted, on create and on change", async (currency) => {
    const d = await org.deal({ title: "c", account_id: account.id, currency });
    expect(d.currency).toBe(currency);
    const again = await org.ok("PATCH", `/deals/${d.id}`, { currency: "GBP" });
    expect(again.currency).toBe("GBP");
  });
  test("a change to a code that is no currency is refused too, and the deal keeps its own", async () => {
    const d = await org.deal({ title: "c", account_id: account.id, currency: "EUR" });
    const r = await org.call("PATCH", `/deals/${d.id}`, { currency: "DOL" });
    expect(r.status).toBe(422);
    expect((await org.ok("GET", `/deals/${d.id}`)).currency).toBe("EUR");
  });
});

describe("probability: omitted on create, the stage's", () => {
  test("each default stage gives its own probability", async () => {
    for (const [stage, p] of [["new", 10], ["qualified", 25], ["proposal", 50], ["negotiation", 75], ["won", 100], ["lost", 0]] as const) {
      const d = await org.deal({ title: "p", account_id: account.id, stage });
      expect({ stage, probability: d.probability }).toEqual({ stage, probability: p });
    }
  });
  test("null means none, and a number given is kept", async () => {
    expect((await org.deal({ title: "p", account_id: account.id, stage: "proposal", probability: null })).probability).toBeNull();
    expect((await org.deal({ title: "p", account_id: account.id, stage: "proposal", probability: 33 })).probability).toBe(33);
  });
  test("a stage the organization changed gives its current probability", async () => {
    const stages = await org.ok("GET", "/pipeline-stages");
    const qualified = stages.find((s: { key: string }) => s.key === "qualified");
    await org.ok("PATCH", `/pipeline-stages/${qualified.id}`, { probability: 40 });
    expect((await org.deal({ title: "p", account_id: account.id, stage: "qualified" })).probability).toBe(40);
    await org.ok("PATCH", `/pipeline-stages/${qualified.id}`, { probability: 25 });
  });
  test("a change never resets it: a deal moved to another stage keeps its probability", async () => {
    const d = await org.deal({ title: "p", account_id: account.id, stage: "new" });
    expect((await org.ok("PATCH", `/deals/${d.id}`, { stage: "proposal" })).probability).toBe(10);
  });
});
