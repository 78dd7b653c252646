import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, describe, expect, test } from "bun:test";
import { crmOrg } from "../crm/support";
import { testApp } from "../helpers";
import {
  SPEC_DEAL,
  SPEC_DEAL_DEFAULTS,
  SPEC_DEAL_PAGE,
  SPEC_ENDPOINTS,
  SPEC_INVITATION,
  SPEC_INVITE_REQUEST,
  SPEC_VALIDATION_ERROR,
  type SpecField,
  type SpecType,
} from "./spec-tables";

type Schema = Record<string, any>;

const t = testApp();
afterAll(() => t.close());
const served = await t.json("GET", "/api/v1/openapi.json");
const document = served.body as Schema;

/** Follows a local $ref to the schema it names. */
function resolve(s: Schema): Schema {
  if (typeof s?.$ref !== "string") return s;
  const name = s.$ref.replace("#/components/schemas/", "");
  const found = document.components?.schemas?.[name];
  if (!found) throw new Error(`dangling $ref ${s.$ref}`);
  return resolve(found);
}

/** The non-null alternatives of a schema, and whether null is allowed. */
function alternatives(s: Schema): { nullable: boolean; kinds: Schema[] } {
  s = resolve(s);
  const parts: Schema[] = s.anyOf ?? s.oneOf ?? [s];
  let nullable = false;
  const kinds: Schema[] = [];
  for (const p of parts.map(resolve)) {
    const types: unknown[] = Array.isArray(p.type) ? p.type : [p.type];
    if (types.includes("null")) nullable = true;
    const rest = types.filter((x) => x !== "null");
    if (p.anyOf || p.oneOf) {
      const inner = alternatives(p);
      nullable ||= inner.nullable;
      kinds.push(...inner.kinds);
    } else if (rest.length > 0 || p.type === undefined) kinds.push({ ...p, type: rest.length === 1 ? rest[0] : rest.length ? rest : undefined });
  }
  return { nullable, kinds };
}

/** Whether a (non-null) schema has the table's type. */
function hasType(kinds: Schema[], want: SpecType): boolean {
  if (want === "any") return true;
  if (kinds.length !== 1 && want !== "list of location items") return false;
  const k = kinds[0]!;
  switch (want) {
    case "string":
    case "decimal text":
      return k.type === "string" && k.format !== "date-time" && k.format !== "date";
    case "datetime":
      return k.type === "string" && k.format === "date-time";
    case "date":
      return k.type === "string" && k.format === "date";
    case "integer":
      return k.type === "integer";
    case "boolean":
      return k.type === "boolean";
    case "map string to any":
    case "object":
      return k.type === "object" && k.properties === undefined;
    case "list of Deal":
      return k.type === "array" && fieldsMatch(resolve(k.items), SPEC_DEAL).length === 0;
    case "list of location items": {
      if (kinds.length !== 1 || k.type !== "array") return false;
      const items = alternatives(k.items).kinds.map((x) => x.type).sort();
      return JSON.stringify(items) === JSON.stringify(["integer", "string"]);
    }
  }
}

/** Every way an object schema differs from a fixed table (docs/interface.md#fixed-shapes): missing, extra, type, required, nullable. */
function fieldsMatch(object: Schema, table: SpecField[]): string[] {
  const o = resolve(object);
  const problems: string[] = [];
  const props: Record<string, Schema> = o.properties ?? {};
  const required = new Set<string>(o.required ?? []);
  for (const field of table) {
    const p = props[field.name];
    if (!p) {
      problems.push(`${field.name}: missing`);
      continue;
    }
    const { nullable, kinds } = alternatives(p);
    if (!hasType(kinds, field.type)) problems.push(`${field.name}: type is ${JSON.stringify(kinds)}, the table says ${field.type}`);
    if (required.has(field.name) !== field.required) problems.push(`${field.name}: required ${required.has(field.name)}, the table says ${field.required}`);
    if (field.type !== "any" && nullable !== field.nullable) problems.push(`${field.name}: nullable ${nullable}, the table says ${field.nullable}`);
  }
  for (const name of Object.keys(props)) if (!table.some((f) => f.name === name)) problems.push(`${name}: not in the table`);
  return problems;
}

const operation = (method: string, path: string): Schema => document.paths?.[path]?.[method.toLowerCase()];
const responseSchema = (method: string, path: string, status: number): Schema =>
  operation(method, path)?.responses?.[status]?.content?.["application/json"]?.schema;

describe("GET /api/v1/openapi.json", () => {
  test("is served as JSON, OpenAPI 3.1, with no credentials needed", () => {
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toContain("application/json");
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    expect(document.components.securitySchemes.cookie).toMatchObject({ type: "apiKey", in: "cookie", name: "svc_session" });
  });

  test("passes an OpenAPI 3.1 validator", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  test.each(SPEC_ENDPOINTS)("the fixed operation %s %s is in the document", (method, path) => {
    expect(operation(method, path)).toBeDefined();
  });

  test("every path carries the /api/v1 prefix, and every operation its summary and error responses", () => {
    for (const [path, ops] of Object.entries<Schema>(document.paths)) {
      expect(path.startsWith("/api/v1/")).toBe(true);
      for (const [method, op] of Object.entries<Schema>(ops)) {
        expect({ method, path, summary: typeof op.summary }).toEqual({ method, path, summary: "string" });
        const statuses = Object.keys(op.responses ?? {});
        expect({ method, path, has422: statuses.includes("422"), has500: statuses.includes("500") }).toEqual({ method, path, has422: true, has500: true });
        // A success: a 2xx, or the 302 of a browser redirect (the identity-provider flow).
        expect(statuses.some((s) => s.startsWith("2") || s === "302")).toBe(true);
        const isPublic = Array.isArray(op.security) && op.security.length === 0;
        if (!isPublic) expect({ path, method, has401: statuses.includes("401") }).toEqual({ path, method, has401: true });
      }
    }
  });

  test("request bodies are JSON only (the CSV imports: text/csv), and their routes say they may answer 413 and 415", () => {
    let bodies = 0;
    for (const [path, ops] of Object.entries<Schema>(document.paths)) {
      for (const op of Object.values<Schema>(ops)) {
        if (!op.requestBody) continue;
        bodies++;
        const csvImport = /^\/api\/v1\/crm\/(deals|accounts|contacts)\/import$/.test(path);
        expect({ path, types: Object.keys(op.requestBody.content) }).toEqual({ path, types: [csvImport ? "text/csv" : "application/json"] });
        expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["413", "415", "422"]));
      }
    }
    expect(bodies).toBeGreaterThan(15);
  });

  test("answers and request bodies are described as JSON Schema 2020-12, without OpenAPI 3.0's `nullable`", () => {
    expect(JSON.stringify(document.components.schemas)).not.toContain('"nullable"');
    // The whole document: request bodies too (found by the bad-input fuzz, which reads them).
    expect(JSON.stringify(document)).not.toContain('"nullable"');
  });
});

describe("the fixed shapes, field by field", () => {
  test("Deal page (GET /crm/deals 200) and Deal", () => {
    const page = responseSchema("GET", "/api/v1/crm/deals", 200);
    expect(page).toBeDefined();
    expect(fieldsMatch(page, SPEC_DEAL_PAGE)).toEqual([]);
    expect(fieldsMatch(resolve(resolve(page).properties.items).items, SPEC_DEAL)).toEqual([]);
  });

  test("DealRead carries the fixed defaults, and a deal created without those fields answers them", async () => {
    const deal = resolve(responseSchema("GET", "/api/v1/crm/deals/{id}", 200));
    const defaults = Object.fromEntries(Object.entries<Schema>(deal.properties).filter(([, p]) => "default" in p).map(([name, p]) => [name, p.default]));
    expect(defaults).toEqual(SPEC_DEAL_DEFAULTS);
    const org = await crmOrg(t, "defaults");
    const account = await org.account("Acme");
    const created = await org.deal({ title: "Bare", account_id: account.id });
    for (const [name, value] of Object.entries(SPEC_DEAL_DEFAULTS)) expect({ name, value: created[name] }).toEqual({ name, value });
  });

  test("the deal list's query parameters are the fixed ones", () => {
    const params: Schema[] = operation("GET", "/api/v1/crm/deals").parameters ?? [];
    const names = params.filter((p) => p.in === "query").map((p) => p.name).sort();
    expect(names).toEqual(["account_id", "assigned_to", "contact_id", "mine", "page", "search", "size", "sort_by", "sort_dir", "stage", "unassigned"]);
  });

  test("Invitation (POST /users/invite 201 and 200) and InviteUserRequest", () => {
    for (const status of [201, 200]) {
      const invitation = responseSchema("POST", "/api/v1/users/invite", status);
      expect(invitation).toBeDefined();
      expect(fieldsMatch(invitation, SPEC_INVITATION)).toEqual([]);
    }
    const request = operation("POST", "/api/v1/users/invite").requestBody.content["application/json"].schema;
    expect(fieldsMatch(request, SPEC_INVITE_REQUEST)).toEqual([]);
  });

  test("ValidationError, inside every 422 body", () => {
    const body = responseSchema("POST", "/api/v1/users/invite", 422);
    const detail = resolve(body).properties.detail;
    expect(resolve(body).required ?? []).not.toContain("detail");
    expect(fieldsMatch(resolve(detail).items, SPEC_VALIDATION_ERROR)).toEqual([]);
    expect(fieldsMatch(resolve(responseSchema("GET", "/api/v1/crm/deals", 422)).properties.detail.items, SPEC_VALIDATION_ERROR)).toEqual([]);
  });

  test("the checker itself notices a wrong table", () => {
    const page = responseSchema("GET", "/api/v1/crm/deals", 200);
    const wrong = SPEC_DEAL_PAGE.map((f) => (f.name === "total" ? { ...f, type: "string" as const } : f));
    expect(fieldsMatch(page, wrong)).toEqual([expect.stringContaining("total: type")]);
    expect(fieldsMatch(page, SPEC_DEAL_PAGE.slice(1))).toEqual(["items: not in the table"]);
  });
});

describe("GET /api/v1/docs", () => {
  test("is a page whose assets are served by the app itself, nothing from a CDN", async () => {
    const page = await t.request("GET", "/api/v1/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const a of assets) {
      expect(a.startsWith("/api/v1/")).toBe(true);
      const r = await t.request("GET", a);
      expect(r.status).toBe(200);
      // The page's own init.js is a few lines; Swagger UI's files are large.
      expect((await r.arrayBuffer()).byteLength).toBeGreaterThan(a.endsWith("/init.js") ? 50 : 1000);
    }
    expect(html).toContain("/api/v1/openapi.json");
    expect(html).not.toMatch(/https?:\/\//);
  });

  test("the bundle is gzipped for browsers that accept it", async () => {
    const r = await t.request("GET", "/api/v1/docs/swagger-ui-bundle.js", { headers: { "accept-encoding": "gzip, br" } });
    expect(r.headers.get("content-encoding")).toBe("gzip");
    const plain = await t.request("GET", "/api/v1/docs/swagger-ui-bundle.js");
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(await plain.text()).toContain("SwaggerUIBundle");
  });
});
