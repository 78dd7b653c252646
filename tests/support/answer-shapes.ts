import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import type { AnyElysia } from "elysia";
import { buildDocument } from "../../src/http/openapi-document";

/**
 * Every 2xx JSON answer the in-process test client (tests/helpers.ts) receives is checked against
 * the schema the app's own OpenAPI document gives for its operation and status: a service that
 * drifts from its declared shape fails the test that called it, naming where.
 *
 * Stricter than the document in one way: objects are closed. The document does not forbid extra
 * fields (clients must ignore them), but an answer with a field its schema does not declare is a
 * drift here (a leaked column, a renamed field), so every object schema gets
 * `additionalProperties: false` (`unevaluatedProperties: false` over an `allOf`).
 */

type Json = Record<string, unknown>;
interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: Json }> }>;
}
type Document = ReturnType<typeof buildDocument>;

/** Not in the document on purpose: the document itself and its reference page. */
const UNDOCUMENTED = [/^\/api\/v1\/openapi\.json$/, /^\/api\/v1\/docs(\/|$)/];

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
/** The formats answers use; request-only ones (money, subdomain…) are never checked here. */
const FORMATS = {
  date: (v: string) => DATE.test(v) && !Number.isNaN(Date.parse(v)),
  "date-time": (v: string) => DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)),
  email: (v: string) => /^[^@\s]+@[^@\s]+$/.test(v),
  calendar_date: true,
  subdomain: true,
  money: true,
} as const;

/** A copy of `schema` whose objects accept no undeclared field; `open` leaves this level open (inside an allOf). */
function closed(schema: unknown, components: Record<string, unknown>, open = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => closed(s, components));
  if (typeof schema !== "object" || schema === null) return schema;
  const s = schema as Json;
  if (open && typeof s.$ref === "string") {
    // A branch of an allOf is inlined open: the allOf's own unevaluatedProperties closes the whole.
    return closed(components[s.$ref.replace("#/components/schemas/", "")], components, true);
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === "allOf") out.allOf = (v as unknown[]).map((b) => closed(b, components, true));
    else if (k === "properties") out.properties = Object.fromEntries(Object.entries(v as Json).map(([p, ps]) => [p, closed(ps, components)]));
    else if (["items", "anyOf", "oneOf", "additionalProperties", "patternProperties"].includes(k)) {
      out[k] = k === "patternProperties" ? Object.fromEntries(Object.entries(v as Json).map(([p, ps]) => [p, closed(ps, components)])) : closed(v, components);
    } else out[k] = v;
  }
  if (!open && s.properties && s.additionalProperties === undefined && s.patternProperties === undefined) out.additionalProperties = false;
  if (!open && s.allOf && s.unevaluatedProperties === undefined) out.unevaluatedProperties = false;
  return out;
}

/** One checker per distinct document (every test app of a process has the same routes, so usually one). */
class Checker {
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: { method: string; segments: string[]; literals: number; path: string }[] = [];

  constructor(private readonly document: Document) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, formats: FORMATS });
    const components = document.components.schemas as Record<string, unknown>;
    const schemas = Object.fromEntries(Object.entries(components).map(([name, s]) => [name, closed(s, components)]));
    this.ajv.addSchema({ $id: "api", components: { schemas } });
    for (const [path, ops] of Object.entries(document.paths)) {
      const segments = path.split("/");
      for (const method of Object.keys(ops)) this.templates.push({ method, segments, literals: segments.filter((p) => !p.startsWith("{")).length, path });
    }
  }

  /** The path template of a concrete path and method: literal segments win over parameters (`/deals/export` over `/deals/{id}`). */
  operation(method: string, path: string): { path: string; op: Operation } | null {
    const segments = path.split("/");
    let best: (typeof this.templates)[number] | null = null;
    for (const t of this.templates) {
      if (t.method !== method || t.segments.length !== segments.length) continue;
      if (!t.segments.every((p, i) => p.startsWith("{") || p === segments[i])) continue;
      if (!best || t.literals > best.literals) best = t;
    }
    return best && { path: best.path, op: (this.document.paths as Record<string, Record<string, Operation>>)[best.path]![method]! };
  }

  validator(schema: Json): ValidateFunction {
    const key = JSON.stringify(schema);
    let v = this.validators.get(key);
    if (!v) {
      // Answers name their schema by $ref: point it into the registered document.
      const own = JSON.stringify(closed(schema, this.document.components.schemas as Record<string, unknown>));
      v = this.ajv.compile(JSON.parse(own.replaceAll('"#/components/schemas/', '"api#/components/schemas/')) as Json);
      this.validators.set(key, v);
    }
    return v;
  }
}

const checkers = new Map<string, Checker>();

const describe = (e: ErrorObject) => {
  const p = e.params as Record<string, unknown>;
  const extra = p.additionalProperty ?? p.unevaluatedProperty;
  const allowed = p.allowedValue ?? p.allowedValues;
  const why = extra !== undefined ? `has ${String(extra)}, which the schema does not declare` : `${e.message}${allowed !== undefined ? ` ${JSON.stringify(allowed)}` : ""}`;
  return `${e.instancePath || "(the body)"}: ${why}`;
};

/**
 * A checker bound to one app: `check` throws when a 2xx JSON answer does not match the schema of
 * its operation and status, or when the document has no such operation or status.
 */
export function answerShapes(app: AnyElysia) {
  let checker: Checker | null = null;
  const forApp = () => {
    if (checker) return checker;
    const document = buildDocument(app, "test");
    const key = JSON.stringify(document);
    checker = checkers.get(key) ?? new Checker(document);
    checkers.set(key, checker);
    return checker;
  };

  return function check(method: string, url: string, status: number, contentType: string | null, body: unknown): void {
    if (status < 200 || status > 299 || !contentType?.includes("json") || method === "HEAD") return;
    const pathname = new URL(url, "http://localhost").pathname;
    const path = pathname.length > 1 ? pathname.replace(/\/$/, "") : pathname;
    if (!path.startsWith("/api/") || UNDOCUMENTED.some((p) => p.test(path))) return;
    const found = forApp().operation(method.toLowerCase(), path);
    const what = `${method} ${path} answered ${status}`;
    if (!found) throw new Error(`${what} with JSON, but the OpenAPI document has no such operation`);
    const schema = found.op.responses?.[status]?.content?.["application/json"]?.schema;
    if (!schema) throw new Error(`${what} with JSON, but the OpenAPI document's ${method} ${found.path} declares no JSON body for ${status}`);
    const validate = forApp().validator(schema);
    if (!validate(body)) {
      const name = typeof schema.$ref === "string" ? schema.$ref.split("/").pop() : "its schema";
      throw new Error(`${what}, which does not match ${name} in the OpenAPI document:\n  ${(validate.errors ?? []).map(describe).join("\n  ")}`);
    }
  };
}
