import { afterAll, describe, expect, test } from "bun:test";
import { testApp } from "../helpers";
import { answerShapes } from "../support/answer-shapes";

// The test client checks every 2xx JSON answer against the OpenAPI document (tests/support/
// answer-shapes.ts). These answers drift on purpose, by a service made to answer wrong: each must
// fail the request at once, saying where.

const t = testApp();
afterAll(() => t.close());
const org = await t.signup();
const token = org.access_token;

type Read = typeof t.ctx.tenants.read;
/** Runs `fn` with GET /tenant answering `drift(real answer)`. */
async function withTenantAnswer(drift: (real: Record<string, unknown>) => unknown, fn: () => Promise<unknown>) {
  const real = t.ctx.tenants.read;
  t.ctx.tenants.read = (async (id: string) => drift({ ...(await real(id)) })) as unknown as Read;
  try {
    return await fn();
  } finally {
    t.ctx.tenants.read = real;
  }
}

const getTenant = () => t.json("GET", "/api/v1/tenant", { token });

describe("a 2xx JSON answer is checked against its operation's schema", () => {
  test("the right answer passes", async () => {
    expect((await getTenant()).status).toBe(200);
  });

  test("a field of the wrong type fails, naming the field and the schema", async () => {
    const run = withTenantAnswer((r) => ({ ...r, name: 42 }), getTenant);
    await expect(run).rejects.toThrow(/GET \/api\/v1\/tenant answered 200, which does not match TenantRead[\s\S]*\/name: must be string/);
  });

  test("a missing field fails", async () => {
    const run = withTenantAnswer(({ created_at: _, ...r }) => r, getTenant);
    await expect(run).rejects.toThrow(/must have required property 'created_at'/);
  });

  test("a field the schema does not declare fails", async () => {
    const run = withTenantAnswer((r) => ({ ...r, password_hash: "x" }), getTenant);
    await expect(run).rejects.toThrow(/has password_hash, which the schema does not declare/);
  });

  test("a value outside a nested schema fails with its path (an item of a page)", async () => {
    const account = await t.json("POST", "/api/v1/crm/accounts", { token, body: { name: "Acme" } });
    await t.json("POST", "/api/v1/crm/deals", { token, body: { title: "Deal", account_id: account.body.id } });
    const real = t.ctx.deals.list;
    t.ctx.deals.list = (async (...a: Parameters<typeof real>) => {
      const page = await real(...a);
      return { ...page, items: page.items.map((d) => ({ ...d, probability: "high" })) };
    }) as unknown as typeof real;
    try {
      await expect(t.json("GET", "/api/v1/crm/deals", { token })).rejects.toThrow(/does not match DealPage[\s\S]*\/items\/0\/probability/);
    } finally {
      t.ctx.deals.list = real;
    }
  });

  test("a 2xx status the operation does not declare fails", () => {
    const check = answerShapes(t.app);
    expect(() => check("GET", "/api/v1/tenant", 201, "application/json", {})).toThrow(/declares no JSON body for 201/);
    expect(() => check("GET", "/api/v1/no-such-thing", 200, "application/json", {})).toThrow(/has no such operation/);
  });

  test("answers outside the API, and errors, are not checked here", () => {
    const check = answerShapes(t.app);
    expect(() => check("GET", "/api/v1/openapi.json", 200, "application/json", {})).not.toThrow();
    expect(() => check("GET", "/api/v1/tenant", 404, "application/json", {})).not.toThrow();
    expect(() => check("GET", "/", 200, "text/html", "")).not.toThrow();
  });
});
