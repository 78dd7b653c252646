import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { centsOf, decimalText } from "../../src/crm/money";
import { ERROR_CODE } from "../../src/kernel/errors";
import { QueryReader } from "../../src/kernel/paging";
import { testApp } from "../helpers";
import { catalogue } from "./error-catalogue";

/**
 * The OpenAPI document as third-party tools read it (issue 13, 3c): Redocly's lint, one tag per
 * part of the API, X-Tenant and the response headers declared, shared schemas as components, and
 * the request forms (a deal's value, query booleans) that say exactly what the server accepts.
 */

type Schema = Record<string, any>;

const t = testApp();
afterAll(() => t.close());
const document = (await t.json("GET", "/api/v1/openapi.json")).body as Schema;

/** Follows a local $ref (schema, parameter or header) to what it names. */
function deref(node: Schema): Schema {
  if (typeof node?.$ref !== "string") return node;
  const [, , kind, name] = node.$ref.split("/");
  const found = document.components?.[kind]?.[name];
  if (!found) throw new Error(`dangling $ref ${node.$ref}`);
  return deref(found);
}

const operations: Array<{ method: string; path: string; op: Schema }> = Object.entries<Schema>(document.paths).flatMap(([path, ops]) =>
  Object.entries<Schema>(ops).map(([method, op]) => ({ method, path, op })),
);
const key = (o: { method: string; path: string }) => `${o.method.toUpperCase()} ${o.path}`;

describe("Redocly CLI lint (recommended rules)", () => {
  const ROOT = join(import.meta.dir, "../..");
  const CLI = join(ROOT, "node_modules/@redocly/cli/bin/cli.js");
  const NO_NETWORK = join(import.meta.dir, "no-network.ts");
  // Offline and quiet: no telemetry, no update check, nothing written to the real home.
  const run = (args: string[], home: string) =>
    Bun.spawnSync([process.execPath, "--preload", NO_NETWORK, ...args], {
      cwd: home,
      env: { PATH: process.env.PATH ?? "", HOME: home, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1", CI: "true" },
    });

  test("the guard against network use catches fetch and sockets (so its silence below means something)", () => {
    const home = mkdtempSync(join(tmpdir(), "no-network-"));
    try {
      const probe = join(home, "probe.ts");
      writeFileSync(probe, 'import net from "node:net";\ntry { await fetch("http://127.0.0.1:9"); } catch {}\ntry { net.connect(9, "127.0.0.1"); } catch {}\n');
      const r = run([probe], home);
      expect(r.stderr.toString()).toContain("NETWORK ATTEMPT: fetch");
      expect(r.stderr.toString()).toContain("NETWORK ATTEMPT: net.connect");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("the served document has 0 errors, and the lint never touches the network", () => {
    const home = mkdtempSync(join(tmpdir(), "openapi-lint-"));
    try {
      const file = join(home, "openapi.json");
      writeFileSync(file, JSON.stringify(document, null, 2));
      const r = run([CLI, "lint", "--config", join(import.meta.dir, "redocly.yaml"), "--format=json", file], home);
      const stderr = r.stderr.toString();
      expect(stderr).not.toContain("NETWORK ATTEMPT");
      const report = JSON.parse(r.stdout.toString()) as { totals: { errors: number; warnings: number }; problems: Array<{ ruleId: string; severity: string; message: string }> };
      const errors = report.problems.filter((p) => p.severity === "error").map((p) => `${p.ruleId}: ${p.message}`);
      expect(errors).toEqual([]);
      expect(report.totals.errors).toBe(0);
      expect(r.exitCode).toBe(0);
      const warnings = report.problems.map((p) => p.ruleId);
      console.log(`redocly lint: 0 errors, ${report.totals.warnings} warning(s)${warnings.length ? ` (${warnings.join(", ")})` : ""}`);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("tags: one per part of the API, declared once, used consistently", () => {
  const PART: Array<[RegExp, string]> = [
    [/^\/api\/v1\/auth\/2fa\//, "two-factor"],
    [/^\/api\/v1\/auth\/passkeys(\/|$)/, "passkeys"],
    [/^\/api\/v1\/auth\//, "auth"],
    [/^\/api\/v1\/users(\/|$)/, "users"],
    [/^\/api\/v1\/crm\//, "crm"],
    [/^\/api\/v1\/audit-log$/, "audit"],
    [/^\/api\/v1\/health(\/ready)?$/, "health"],
    [/^\/api\/v1\/metrics$/, "metrics"],
    [/^\/api\/v1\/tenant$/, "organization"],
    [/^\/api\/v1\/tls\//, "tls"],
    [/^\/api\/v1\/operator\//, "operator"],
    [/^\/api\/v1\/events(\/stream)?$/, "events"],
    [/^\/api\/v1\/webhooks(\/|$)/, "webhooks"],
  ];

  test("every operation has exactly one tag, the one of its URL", () => {
    const wrong = operations
      .map((o) => ({ op: key(o), tags: o.op.tags, want: PART.find(([re]) => re.test(o.path))?.[1] }))
      .filter((o) => JSON.stringify(o.tags) !== JSON.stringify([o.want]));
    expect(wrong).toEqual([]);
  });

  test("the top-level tags are exactly the used ones, each with a description", () => {
    const declared = (document.tags as Schema[]).map((tag) => tag.name);
    expect(new Set(declared).size).toBe(declared.length);
    expect(declared.sort()).toEqual([...new Set(operations.map((o) => o.op.tags[0]))].sort());
    for (const tag of document.tags) expect(tag.description.length).toBeGreaterThan(10);
  });

  test("every operation has a unique operationId that starts with a letter", () => {
    const ids = operations.map((o) => o.op.operationId);
    expect(ids.every((id) => /^[a-z][A-Za-z0-9]*$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("headers", () => {
  test("every operation declares the optional X-Tenant header: a subdomain, any case", () => {
    for (const o of operations) {
      const params = (o.op.parameters ?? []).map(deref);
      expect({ op: key(o), xTenant: params.filter((p: Schema) => p.in === "header" && p.name === "X-Tenant").length }).toEqual({ op: key(o), xTenant: 1 });
    }
    const p = deref({ $ref: "#/components/parameters/XTenant" });
    expect(p).toMatchObject({ name: "X-Tenant", in: "header", required: false, schema: { type: "string" } });
    expect(p.description).toContain("tenant_mismatch");
    const pattern = new RegExp(p.schema.pattern);
    for (const ok of ["acme", "ACME", "a-b", "team42", "x"]) expect(pattern.test(ok)).toBe(true);
    for (const bad of ["", "-acme", "acme-", "a b", "a.b", "acme/x"]) expect(pattern.test(bad)).toBe(false);
  });

  test("every 401 declares WWW-Authenticate: Bearer, every 429 Retry-After in seconds", () => {
    let seen401 = 0;
    let seen429 = 0;
    for (const o of operations) {
      for (const [status, response] of Object.entries<Schema>(o.op.responses)) {
        const headers = Object.fromEntries(Object.entries<Schema>(response.headers ?? {}).map(([name, h]) => [name, deref(h)]));
        if (status === "401") {
          seen401++;
          expect({ op: key(o), schema: headers["WWW-Authenticate"]?.schema }).toEqual({ op: key(o), schema: { type: "string", const: "Bearer" } });
        }
        if (status === "429") {
          seen429++;
          expect({ op: key(o), schema: headers["Retry-After"]?.schema }).toEqual({ op: key(o), schema: { type: "integer", minimum: 1 } });
        }
      }
    }
    expect(seen401).toBeGreaterThan(25);
    expect(seen429).toBeGreaterThanOrEqual(8);
  });

  const SETS = ["POST /api/v1/auth/login", "POST /api/v1/auth/signup", "POST /api/v1/auth/2fa/verify", "POST /api/v1/auth/magic-verify", "POST /api/v1/auth/invitations/accept", "POST /api/v1/auth/refresh", "POST /api/v1/auth/passkeys/login/verify"];
  const CLEARS = ["POST /api/v1/auth/logout", "POST /api/v1/auth/logout-all", "POST /api/v1/auth/sessions/revoke"];

  test("Set-Cookie is declared on the success answers of exactly the operations that set or clear the cookies", () => {
    const declared: Record<string, string> = {};
    for (const o of operations) {
      for (const [status, response] of Object.entries<Schema>(o.op.responses)) {
        const h = response.headers?.["Set-Cookie"];
        if (!h) continue;
        expect({ op: key(o), status: status.startsWith("2") }).toEqual({ op: key(o), status: true });
        declared[key(o)] = h.$ref.split("/").at(-1);
        expect(deref(h).description).toContain("svc_refresh");
      }
    }
    expect(declared).toEqual({
      ...Object.fromEntries(SETS.map((k) => [k, "SetSessionCookies"])),
      ...Object.fromEntries(CLEARS.map((k) => [k, "ClearSessionCookies"])),
    });
  });

  test("and the server does so: cookies set by signup, login and refresh, cleared by revoke (own), logout and logout-all, none elsewhere", async () => {
    const names = (r: Response) => r.headers.getSetCookie().map((c) => c.split("=")[0]).sort();
    const cleared = (r: Response) => r.headers.getSetCookie().every((c) => /max-age=0/i.test(c));
    const signup = await t.request("POST", "/api/v1/auth/signup", {
      body: { email: "cookies@jar.test", password: "correct horse battery", tenant_name: "Jar", subdomain: "jar" },
    });
    expect(signup.status).toBe(201);
    expect(names(signup)).toEqual(["svc_refresh", "svc_session"]);
    const session = async () => {
      const r = await t.request("POST", "/api/v1/auth/login", { body: { email: "cookies@jar.test", password: "correct horse battery" }, tenant: "jar" });
      expect(r.status).toBe(200);
      expect(names(r)).toEqual(["svc_refresh", "svc_session"]);
      return (await r.json()) as { access_token: string; refresh_token: string };
    };
    const first = await session();
    const refreshed = await t.request("POST", "/api/v1/auth/refresh", { body: { refresh_token: first.refresh_token }, tenant: "jar" });
    expect(names(refreshed)).toEqual(["svc_refresh", "svc_session"]);
    const token = ((await refreshed.json()) as { access_token: string }).access_token;
    for (const [method, path] of [["GET", "/api/v1/auth/me"], ["GET", "/api/v1/auth/sessions"], ["POST", "/api/v1/auth/sessions/revoke-others"], ["GET", "/api/v1/auth/2fa/status"]]) {
      const r = await t.request(method!, path!, { token });
      expect({ path, status: r.status, cookies: names(r) }).toEqual({ path, status: 200, cookies: [] });
    }
    const sessions = (await (await t.request("GET", "/api/v1/auth/sessions", { token })).json()) as Array<{ id: string; current: boolean }>;
    const own = sessions.find((s) => s.current)!;
    const revoked = await t.request("POST", "/api/v1/auth/sessions/revoke", { token, body: { session_id: own.id } });
    expect(revoked.status).toBe(200);
    expect(names(revoked)).toEqual(["svc_refresh", "svc_session"]);
    expect(cleared(revoked)).toBe(true);
    for (const path of ["/api/v1/auth/logout", "/api/v1/auth/logout-all"]) {
      const r = await t.request("POST", path, { token: (await session()).access_token });
      expect(r.status).toBe(200);
      expect(names(r)).toEqual(["svc_refresh", "svc_session"]);
      expect(cleared(r)).toBe(true);
    }
  });
});

describe("error answers", () => {
  test("every error response has an example whose code the server can answer; 400, 409 and 503 name their route's codes", () => {
    const known = catalogue();
    for (const o of operations) {
      for (const [status, response] of Object.entries<Schema>(o.op.responses)) {
        if (Number(status) < 400) continue;
        const example = response.content["application/json"].example;
        const at = `${key(o)} ${status}`;
        expect({ at, example: example !== undefined }).toEqual({ at, example: true });
        if (status === "422") continue;
        expect({ at, known: known.has(example.code) }).toEqual({ at, known: true });
        if (["400", "409", "503"].includes(status)) {
          const named = [...response.description.matchAll(/`([a-z0-9_]+)`/g)].map((m) => m[1]!);
          expect({ at, named: named.length > 0 && named.every((c) => known.has(c)) }).toEqual({ at, named: true });
          expect(named).toContain(example.code);
        }
      }
    }
  });
});

describe("shared schemas are components, referenced, never copied", () => {
  const schemas = document.components.schemas as Record<string, Schema>;
  const text = JSON.stringify(document);

  test("the named resources are components", () => {
    for (const name of ["DealRead", "Invitation", "ValidationError", "HTTPValidationError", "ErrorBody", "TokenPair", "TwoFactorChallenge", "UserRead", "TenantRead", "DealValue"])
      expect(Object.keys(schemas)).toContain(name);
    expect(schemas.DealPage.properties.items.items).toEqual({ $ref: "#/components/schemas/DealRead" });
    expect(schemas.InvitationPage.properties.items.items).toEqual({ $ref: "#/components/schemas/Invitation" });
    expect(schemas.HTTPValidationError.properties.detail.items).toEqual({ $ref: "#/components/schemas/ValidationError" });
    expect(schemas.LoginResponse.anyOf).toEqual([{ $ref: "#/components/schemas/TokenPair" }, { $ref: "#/components/schemas/TwoFactorChallenge" }]);
    expect(schemas.SignupResponse.allOf).toContainEqual({ $ref: "#/components/schemas/TokenPair" });
    expect(schemas.ErrorBody.properties.code.pattern).toBe(ERROR_CODE.source);
  });

  test("no schema in the document is a copy of a component", () => {
    const bodies = new Map(Object.entries(schemas).map(([name, s]) => [JSON.stringify(s), name]));
    const copies: string[] = [];
    const walk = (node: unknown, at: string) => {
      if (typeof node !== "object" || node === null) return;
      const copyOf = bodies.get(JSON.stringify(node));
      if (copyOf && at !== `/components/schemas/${copyOf}`) copies.push(`${at} copies ${copyOf}`);
      for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k}`);
    };
    walk(document, "");
    expect(copies).toEqual([]);
  });

  test("every component is used", () => {
    for (const kind of ["schemas", "parameters", "headers"]) {
      for (const name of Object.keys(document.components[kind])) expect({ kind, name, used: text.includes(`"#/components/${kind}/${name}"`) }).toEqual({ kind, name, used: true });
    }
  });
});

describe("request forms say exactly what the server accepts", () => {
  const value = deref(document.components.schemas.DealValue);
  const [text, number] = value.oneOf as Schema[];
  const docTakesText = (s: string) => s.length <= text!.maxLength && new RegExp(text!.pattern).test(s);
  const serverTakesText = (s: string) => s.length <= 40 && centsOf(s) !== null;
  const serverTakesNumber = (n: number) => centsOf(String(decimalText(n))) !== null;
  const docTakesNumber = (n: number) => n >= number!.minimum && n <= number!.maximum;

  test("a deal's value in DealCreate and DealPatch: decimal text or a number", () => {
    expect(text).toMatchObject({ type: "string" });
    expect(number).toMatchObject({ type: "number" });
    for (const [method, path] of [["post", "/api/v1/crm/deals"], ["patch", "/api/v1/crm/deals/{id}"]] as const) {
      const body = deref(document.paths[path][method].requestBody.content["application/json"].schema);
      expect(body.properties.value).toEqual({ $ref: "#/components/schemas/DealValue" });
    }
    // What DealRead answers is text alone.
    expect(document.components.schemas.DealRead.properties.value.type).toBe("string");
  });

  test("the text form's pattern accepts exactly the texts the server takes", () => {
    const edges = ["1234.5", "0", "007.50", "1.500", "1.", "9999999999999.99", "10000000000000", "00000000000000", "1.234", "-1", "1e3", "", " 1", ".5", "0x10", "1,5", "١"];
    for (const s of edges) expect({ s, doc: docTakesText(s) }).toEqual({ s, doc: serverTakesText(s) });
    fc.assert(
      fc.property(fc.oneof(fc.stringMatching(/^[0-9]{0,16}(\.[0-9]{0,5})?$/), fc.string({ unit: fc.constantFrom(..."0123456789.-e "), maxLength: 45 })), (s) => docTakesText(s) === serverTakesText(s)),
      { numRuns: 3000, seed: 13 },
    );
  });

  test("the number form: whatever the server takes is in its bounds, and every amount in cents within them is taken", () => {
    fc.assert(fc.property(fc.double({ min: -10, max: 2e13, noNaN: true }), (n) => !serverTakesNumber(n) || docTakesNumber(n)), { numRuns: 3000, seed: 13 });
    fc.assert(fc.property(fc.integer({ min: -100, max: 1e15 + 100 }), (cents) => docTakesNumber(cents / 100) === serverTakesNumber(cents / 100)), { numRuns: 3000, seed: 13 });
  });

  test("query booleans: text whose pattern accepts exactly the spellings QueryReader reads", () => {
    const params = (document.paths["/api/v1/crm/deals"].get.parameters as Schema[]).map(deref).filter((p) => p.name === "mine" || p.name === "unassigned");
    expect(params).toHaveLength(2);
    for (const p of params) {
      expect(p.schema.type).toBe("string");
      expect(p.description).toContain("yes");
    }
    const pattern = new RegExp(params[0]!.schema.pattern);
    const serverTakes = (s: string) => {
      const q = new QueryReader({ b: s });
      q.bool("b");
      return q.items.length === 0;
    };
    const words = ["true", "false", "1", "0", "yes", "no", "on", "off", "TRUE", "Yes", "oN", " off ", "maybe", "2", "", "truee", "y", "nope", "\ttrue\n"];
    for (const s of words) expect({ s, doc: pattern.test(s) }).toEqual({ s, doc: serverTakes(s) });
    fc.assert(fc.property(fc.string({ unit: fc.constantFrom(..."tTrRuUeEfFaAlLsSyYnNoO01 "), maxLength: 7 }), (s) => pattern.test(s) === serverTakes(s)), { numRuns: 3000, seed: 13 });
  });
});
