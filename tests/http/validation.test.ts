import { afterAll, describe, expect, test } from "bun:test";
import { testApp } from "../helpers";
import { JSON_TYPE, expect422 } from "./support";

const t = testApp();
afterAll(() => t.close());

const SIGNUP = "/api/v1/auth/signup";
const LOGIN = "/api/v1/auth/login";
const PASSWORD = "correct horse battery";
const good = (extra: Record<string, unknown> = {}) => ({ email: "owner@valid.test", password: PASSWORD, tenant_name: "Valid Org", subdomain: "valid", ...extra });
const PATTERN = "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$";

describe("422 items: one per failing field, loc starting with body", () => {
  test("signup with an empty object: one `missing` item per required field", async () => {
    const r = await t.json("POST", SIGNUP, { body: {} });
    expect422(
      r,
      ["email", "password", "tenant_name", "subdomain"].map((f) => ({ loc: ["body", f], msg: "Field required", type: "missing" })),
    );
  });

  test("login: two bad fields give exactly two items", async () => {
    const r = await t.json("POST", LOGIN, { body: { email: 5, password: 7 } });
    expect422(r, [
      { loc: ["body", "email"], msg: "Input should be a valid string", type: "string_type", input: 5 },
      { loc: ["body", "password"], msg: "Input should be a valid string", type: "string_type" },
    ]);
  });

  test("login: a missing field next to a good one gives one item", async () => {
    const r = await t.json("POST", LOGIN, { body: { email: "a@b.co" } });
    expect422(r, [{ loc: ["body", "password"], msg: "Field required", type: "missing" }]);
  });

  test("a bad email is a value_error with the input echoed", async () => {
    for (const path of [LOGIN, SIGNUP]) {
      const body = path === LOGIN ? { email: "not-an-email", password: PASSWORD } : good({ email: "not-an-email" });
      const r = await t.json("POST", path, { body });
      expect422(r, [{ loc: ["body", "email"], msg: "value is not a valid email address", type: "value_error", input: "not-an-email" }]);
    }
  });

  test("string lengths: string_too_short / string_too_long carry their bound in ctx", async () => {
    const short = await t.json("POST", SIGNUP, { body: good({ tenant_name: "", subdomain: "ab" }) });
    expect422(short, [
      { loc: ["body", "tenant_name"], msg: "String should have at least 1 character", type: "string_too_short", input: "", ctx: { min_length: 1 } },
      { loc: ["body", "subdomain"], msg: "String should have at least 3 characters", type: "string_too_short", input: "ab", ctx: { min_length: 3 } },
    ]);
    const long = await t.json("POST", SIGNUP, { body: good({ tenant_name: "n".repeat(101), subdomain: "s".repeat(64) }) });
    expect422(long, [
      { loc: ["body", "tenant_name"], msg: "String should have at most 100 characters", type: "string_too_long", input: "n".repeat(101), ctx: { max_length: 100 } },
      { loc: ["body", "subdomain"], msg: "String should have at most 63 characters", type: "string_too_long", input: "s".repeat(64), ctx: { max_length: 63 } },
    ]);
  });

  test("password bounds (8 to 128) are reported without the password", async () => {
    const short = await t.json("POST", SIGNUP, { body: good({ password: "seven77" }) });
    expect422(short, [{ loc: ["body", "password"], msg: "String should have at least 8 characters", type: "string_too_short", ctx: { min_length: 8 } }]);
    const long = await t.json("POST", SIGNUP, { body: good({ password: "p".repeat(129) }) });
    expect422(long, [{ loc: ["body", "password"], msg: "String should have at most 128 characters", type: "string_too_long", ctx: { max_length: 128 } }]);
  });

  test("a subdomain outside a-z 0-9 - is a string_pattern_mismatch", async () => {
    for (const [given, echoed] of [["-acme", "-acme"], ["acme-", "acme-"], ["ac_me", "ac_me"], ["Ac.Me", "ac.me"]]) {
      const r = await t.json("POST", SIGNUP, { body: good({ subdomain: given }) });
      expect422(r, [
        { loc: ["body", "subdomain"], msg: `String should match pattern '${PATTERN}'`, type: "string_pattern_mismatch", input: echoed, ctx: { pattern: PATTERN } },
      ]);
    }
  });

  test("an unknown module is a literal_error at its index", async () => {
    const r = await t.json("POST", SIGNUP, { body: good({ initial_modules: ["crm", "billing", "users", "hr"] }) });
    const item = (i: number, input: string) => ({
      loc: ["body", "initial_modules", i],
      msg: "Input should be 'crm' or 'users'",
      type: "literal_error",
      input,
      ctx: { expected: "'crm' or 'users'" },
    });
    expect422(r, [item(1, "billing"), item(3, "hr")]);
  });

  test("initial_modules that is not a list is a list_type", async () => {
    const r = await t.json("POST", SIGNUP, { body: good({ initial_modules: "crm" }) });
    expect422(r, [{ loc: ["body", "initial_modules"], msg: "Input should be a valid list", type: "list_type", input: "crm" }]);
  });

  test("a reserved subdomain is a value_error at [body, subdomain], in any case", async () => {
    for (const [given, name] of [["admin", "admin"], ["WWW", "www"], ["static", "static"]]) {
      const r = await t.json("POST", SIGNUP, { body: good({ subdomain: given }) });
      expect422(r, [{ loc: ["body", "subdomain"], msg: "Value error, this subdomain is reserved", type: "value_error", input: name }]);
    }
  });

  test("a reserved subdomain is reported beside every other failing field", async () => {
    const r = await t.json("POST", SIGNUP, { body: good({ subdomain: "admin", email: "not-an-email" }) });
    expect422(r, [
      { loc: ["body", "email"], msg: "value is not a valid email address", type: "value_error", input: "not-an-email" },
      { loc: ["body", "subdomain"], msg: "Value error, this subdomain is reserved", type: "value_error", input: "admin" },
    ]);
  });

  test("a wrong field inside an optional object body is reported at its own loc", async () => {
    const r = await t.json("POST", "/api/v1/auth/refresh", { body: { refresh_token: 12345 } });
    expect422(r, [{ loc: ["body", "refresh_token"], msg: "Input should be a valid string", type: "string_type" }]);
  });
});

describe("bodies that are not a JSON object", () => {
  test("malformed JSON: one json_invalid item at [body, 0], never quoting the body", async () => {
    const cases = ['{"email": x}', '{"email": "a@b.co",}', "{", '{"email": "a@b.co"} trailing', "{'email': 1}", '{"password": hunter2}'];
    for (const raw of cases) {
      const r = await t.json("POST", LOGIN, { raw, headers: JSON_TYPE });
      expect422(r, [{ loc: ["body", 0], msg: "JSON decode error", type: "json_invalid" }]);
      expect(JSON.stringify(r.body)).not.toContain("hunter2");
    }
  });

  test("invalid UTF-8 is json_invalid", async () => {
    const raw = new Uint8Array([0x7b, 0x22, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]); // {"e":"\xff\xfe"}
    const r = await t.json("POST", LOGIN, { raw, headers: JSON_TYPE });
    expect(r.status).toBe(422);
    expect(r.body.detail).toHaveLength(1);
    expect(r.body.detail[0]).toMatchObject({ loc: ["body", 0], type: "json_invalid" });
  });

  test("an empty, blank or null body is a missing body", async () => {
    for (const raw of [undefined, "", "   \n", "null"]) {
      const r = await t.json("POST", LOGIN, { raw, headers: JSON_TYPE });
      expect422(r, [{ loc: ["body"], msg: "Field required", type: "missing" }]);
    }
  });

  test("a JSON string, number, boolean or list is not an object", async () => {
    for (const raw of ['"hello"', "42", "true", "[]", '[{"email":"a@b.co","password":"x"}]']) {
      const r = await t.json("POST", SIGNUP, { raw, headers: JSON_TYPE });
      expect422(r, [{ loc: ["body"], msg: "Input should be a valid dictionary or object to extract fields from", type: "model_attributes_type" }]);
    }
  });
});

describe("depth", () => {
  const nest = (n: number) => '{"a":'.repeat(n) + "1" + "}".repeat(n);

  test("a body nested more than 64 levels deep is json_invalid at the bracket that went too deep", async () => {
    for (const [raw, offset] of [['{"email":' + nest(20000) + "}", 9 + 63 * 5], ["[".repeat(100000), 64]] as const) {
      const r = await t.json("POST", LOGIN, { raw, headers: JSON_TYPE });
      expect422(r, [{ loc: ["body", offset], msg: "JSON decode error: nested more than 64 levels deep", type: "json_invalid" }]);
    }
  });

  test("64 levels are fine; brackets inside strings do not count", async () => {
    const deep = await t.json("POST", LOGIN, { raw: '{"email":' + nest(63) + ',"password":"x"}', headers: JSON_TYPE });
    expect422(deep, [{ loc: ["body", "email"], msg: "Input should be a valid string", type: "string_type" }]);
    const brackets = await t.json("POST", LOGIN, { body: { email: "[".repeat(200), password: "x" } });
    expect(brackets.body.detail[0]).toMatchObject({ loc: ["body", "email"], type: "value_error" });
  });

  test("a small wrong list is echoed whole, a big one not at all (never cut short)", async () => {
    const small = await t.json("POST", LOGIN, { body: { email: [1, 2], password: "x" } });
    expect(small.body.detail[0]).toEqual({ loc: ["body", "email"], msg: "Input should be a valid string", type: "string_type", input: [1, 2] });
    const big = await t.json("POST", LOGIN, { body: { email: Array(300).fill(1), password: "x" } });
    expect(big.body.detail[0]).toEqual({ loc: ["body", "email"], msg: "Input should be a valid string", type: "string_type" });
  });

  test("an echoed object input keeps no secret member", async () => {
    const r = await t.json("POST", LOGIN, { body: { email: { name: "x", password: "hunter2", nested: { token: "t0k" } }, password: "x" } });
    expect422(r, [{ loc: ["body", "email"], msg: "Input should be a valid string", type: "string_type", input: { name: "x", nested: {} } }]);
  });
});

describe("secrets are never echoed", () => {
  const secret = "hunter2-is-my-secret";

  test("no password in any 422 body, whatever fails", async () => {
    const bodies: unknown[] = [
      { email: "bad", password: secret },
      { email: "a@b.co", password: { p: secret } },
      { email: "a@b.co", password: [secret] },
      { email: 1, password: secret.repeat(10) },
    ];
    for (const body of bodies) {
      const r = await t.json("POST", LOGIN, { body });
      expect(r.status).toBe(422);
      expect(JSON.stringify(r.body)).not.toContain(secret);
    }
    const signup = await t.json("POST", SIGNUP, { body: good({ password: secret.repeat(7), subdomain: "-" }) });
    expect(signup.status).toBe(422);
    expect(JSON.stringify(signup.body)).not.toContain(secret);
  });

  test("nor in a JSON decode error (the parser's message would quote it)", async () => {
    const r = await t.json("POST", LOGIN, { raw: `{"email":"a@b.co","password":${secret}}`, headers: JSON_TYPE });
    expect(r.status).toBe(422);
    expect(JSON.stringify(r.body)).not.toContain("hunter2");
  });

  test("nor a token inside an echoed object", async () => {
    const refresh = await t.json("POST", "/api/v1/auth/refresh", { body: { refresh_token: ["tok-" + secret] } });
    expect(refresh.status).toBe(422);
    expect(JSON.stringify(refresh.body)).not.toContain(secret);
  });
});

test("on a protected route, credentials are checked before the body's shape is told", async () => {
  const none = await t.json("POST", "/api/v1/auth/sessions/revoke", { body: { session_id: 1 } });
  expect({ status: none.status, code: none.body.code }).toEqual({ status: 401, code: "not_authenticated" });
  const bad = await t.json("POST", "/api/v1/auth/sessions/revoke", { token: "x.y.z", body: {} });
  expect({ status: bad.status, code: bad.body.code }).toEqual({ status: 401, code: "token_invalid" });
});

describe("extra fields", () => {
  test("are ignored, not rejected, and cannot choose the tenant", async () => {
    const r = await t.json("POST", SIGNUP, {
      body: good({ subdomain: "extras", tenant_id: "evil-tenant", id: "evil-id", role: "member", modules: ["x"], is_admin: false }),
    });
    expect(r.status).toBe(201);
    expect(r.body.tenant.id).not.toBe("evil-tenant");
    expect(r.body.tenant.subdomain).toBe("extras");
    expect(r.body.tenant.modules).toEqual(["crm", "users"]);
    expect(r.body.user.id).not.toBe("evil-id");
    expect(r.body.user.role).toBe("admin");
    expect(r.body.user).not.toHaveProperty("tenant_id", "evil-tenant");

    const login = await t.json("POST", LOGIN, { body: { email: "owner@valid.test", password: PASSWORD, tenant_id: "evil-tenant", remember: true } });
    expect(login.status).toBe(200);
    expect(login.body).toEqual({ access_token: expect.any(String), refresh_token: expect.any(String), token_type: "bearer" });
  });
});
