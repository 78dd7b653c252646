import { toOpenAPISchema } from "@elysiajs/openapi";
import type { AnyElysia } from "elysia";
import { DOCUMENTED_AS, HEADERS, PARAMETERS, TAGS, errorResponse, named } from "./openapi";

type Json = Record<string, unknown>;

interface Operation {
  operationId?: string;
  parameters?: unknown[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, unknown>;
}

type Parameter = { name?: string; in?: string; $ref?: string };
/** One parameter: the same name in the same place, or the same reference. */
const sameParameter = (a: Parameter, b: Parameter) => (a.$ref !== undefined ? a.$ref === b.$ref : a.name === b.name && a.in === b.in);

/** Elysia's `/users/:id` is OpenAPI's `/users/{id}`. */
const openApiPath = (path: string) => path.replace(/:([^/]+)/g, "{$1}");
const isOptional = (schema: unknown) =>
  typeof schema === "object" && schema !== null && (schema as Record<symbol, unknown>)[Symbol.for("TypeBox.Optional")] === "Optional";

const COERCED_FROM_TEXT = new Set(["integer", "numeric", "boolean"]);

/**
 * Plain JSON Schema: TypeBox's symbol keys dropped, Elysia's coercing types (t.Integer is "an
 * integer, or text that parses as one", for query strings) reduced to what a body really holds,
 * and a schema marked `documentedAs` replaced by the form clients send.
 */
function plain(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(plain);
  if (typeof schema !== "object" || schema === null) return schema;
  const s = schema as Json;
  if (s[DOCUMENTED_AS]) return plain(s[DOCUMENTED_AS]);
  const anyOf = s.anyOf as Json[] | undefined;
  if (anyOf?.length === 2) {
    const text = anyOf.findIndex((a) => a.type === "string" && COERCED_FROM_TEXT.has(a.format as string));
    if (text !== -1) {
      const { anyOf: _, ...rest } = s;
      return plain({ ...rest, ...anyOf[1 - text] });
    }
  }
  // `nullable` is OpenAPI 3.0's word; in 3.1 the `null` type in anyOf says it.
  return Object.fromEntries(Object.entries(s).filter(([k]) => k !== "nullable").map(([k, v]) => [k, plain(v)]));
}

/** Keys whose values are data, not schemas: a `title` inside them names nothing. */
const DATA_KEYS = new Set(["const", "enum", "default", "examples", "example", "required"]);

/**
 * Every sub-schema with a `title` becomes the component of that name, and a `$ref` to it where it
 * was: a Deal inside a page, a ValidationError inside a 422 body, a token pair inside the login
 * answer are each described once. Two different schemas with one title are a programming error.
 */
class Components {
  readonly schemas: Record<string, unknown> = {};

  add(name: string, schema: Json): void {
    const body = this.children(schema);
    const known = this.schemas[name];
    if (known !== undefined && JSON.stringify(known) !== JSON.stringify(body)) throw new Error(`two different schemas are named ${name}`);
    this.schemas[name] = body;
  }

  /** `schema` with its titled sub-schemas (itself included) replaced by references. */
  hoist(schema: unknown): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.hoist(s));
    if (typeof schema !== "object" || schema === null) return schema;
    const s = schema as Json;
    if (typeof s.title !== "string") return this.children(s);
    this.add(s.title, s);
    return { $ref: `#/components/schemas/${s.title}` };
  }

  private children(s: Json): Json {
    return Object.fromEntries(Object.entries(s).map(([k, v]) => [k, DATA_KEYS.has(k) ? v : this.hoist(v)]));
  }
}

/** `post /api/v1/users/invitations/{id}/revoke` → `postUsersInvitationsByIdRevoke`. */
const operationId = (method: string, path: string) =>
  method +
  path
    .replace(/^\/api\/v1\//, "")
    .split(/[/-]/)
    .map((part) => part.replace(/^\{(.+)\}$/, "by-$1").replace(/(?:^|[-_])(\w)/g, (_, c: string) => c.toUpperCase()))
    .join("");

/**
 * The OpenAPI 3.1 document of every route registered on `app`, generated from their TypeBox
 * schemas. Bodies are JSON only: our own body reader (src/http/body.ts) accepts nothing else.
 */
export function buildDocument(app: AnyElysia, version: string) {
  // The generator's reading of routes is protected API; it is what @elysiajs/openapi itself calls.
  const inner = app as unknown as { getGlobalRoutes(): { method: string; path: string; hooks: Record<string, unknown> }[]; getGlobalDefinitions?(): unknown };
  const jsonOnly = {
    getGlobalRoutes: () =>
      inner
        .getGlobalRoutes()
        .filter((r) => r.path.startsWith("/api/v1/") && !r.path.startsWith("/api/v1/docs") && r.path !== "/api/v1/openapi.json")
        .map((r) => ({ ...r, hooks: { ...r.hooks, parse: [{ fn: "json" }] } })),
    getGlobalDefinitions: () => inner.getGlobalDefinitions?.(),
  } as unknown as AnyElysia;
  const generated = toOpenAPISchema(jsonOnly, undefined, undefined, undefined, "3.1.1").paths as Record<string, Record<string, Operation>>;
  const components = new Components();
  for (const [name, schema] of named) {
    const body = plain(JSON.parse(JSON.stringify(schema))) as Json;
    if (body.title !== undefined && body.title !== name) throw new Error(`the schema named ${name} has the title ${String(body.title)}`);
    components.add(name, body);
  }
  // The generator marks every body required; a route whose body schema is t.Optional takes none.
  for (const r of inner.getGlobalRoutes()) {
    const op = generated[openApiPath(r.path)]?.[r.method.toLowerCase()];
    if (!op) continue;
    // A route with path parameters gets only those from the generator, which drops the query
    // parameters its doc() declares (read by hand, e.g. DELETE /users/{id}'s reassign_to): put them back.
    const documented = (r.hooks.detail as { parameters?: Parameter[] } | undefined)?.parameters ?? [];
    for (const p of documented) if (!(op.parameters ?? []).some((q) => sameParameter(q as Parameter, p))) (op.parameters ??= []).push(p);
    if (!op.requestBody) continue;
    if (isOptional(r.hooks.body)) op.requestBody.required = false;
    // Request bodies get the same plain JSON Schema as answers: no 3.0 `nullable`, no coercion unions.
    for (const media of Object.values(op.requestBody.content ?? {})) media.schema = components.hoist(plain(media.schema));
    // Every route with a body can meet the body reader's refusals (src/http/body.ts).
    op.responses ??= {};
    for (const status of [413, 415]) op.responses[status] ??= errorResponse(status);
  }
  const paths: Record<string, Record<string, Operation>> = {};
  for (const [path, ops] of Object.entries(generated)) {
    // A route mounted at its plugin's prefix ("/users" + "/") answers without the slash too.
    const bare = path.length > 1 ? path.replace(/\/$/, "") : path;
    for (const [method, op] of Object.entries(ops)) {
      op.operationId = operationId(method, bare);
      op.parameters = [...(op.parameters ?? []).map((p) => components.hoist(p)), { $ref: "#/components/parameters/XTenant" }];
    }
    paths[bare] = ops;
  }
  return {
    openapi: "3.1.1",
    info: {
      title: "Workspace Suite API",
      version,
      description:
        "Sign-in with 2FA and magic links, sessions, organizations and invitations, and a CRM. " +
        "A request's organization is named by its Host (`acme.<base domain>`) or the `X-Tenant` header. " +
        "Errors are `{\"detail\": sentence, \"code\": identifier}`; validation errors (422) are FastAPI's `{\"detail\": [{loc, msg, type}]}`.",
    },
    servers: [{ url: "/" }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(components.schemas).sort(([a], [b]) => a.localeCompare(b))),
      parameters: PARAMETERS,
      headers: HEADERS,
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "The access token from sign-in." },
        cookie: { type: "apiKey", in: "cookie", name: "svc_session", description: "The session cookie set by sign-in (browsers)." },
        metricsToken: { type: "http", scheme: "bearer", description: "The operator's SUITE_METRICS_TOKEN (GET /api/v1/metrics only)." },
      },
    },
  };
}
