import { toOpenAPISchema } from "@elysiajs/openapi";
import { type AnyElysia, type DocumentDecoration, type TSchema, t } from "elysia";

/** One item of the 422 body (SPEC.md's ValidationError table). */
export const ValidationError = t.Object({
  loc: t.Array(t.Union([t.String(), t.Integer()])),
  msg: t.String(),
  type: t.String(),
  input: t.Optional(t.Any()),
  ctx: t.Optional(t.Record(t.String(), t.Any())),
});
/** SPEC.md: "an object with an optional `detail`, a list of ValidationError". */
export const HTTPValidationError = t.Object({ detail: t.Optional(t.Array(ValidationError)) });
/** Every other error (CONTRACT §1). */
export const ErrorBody = t.Object({ detail: t.String(), code: t.String() });

const REASONS: Record<number, string> = {
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No content",
  400: "Bad request (`code` says which rule)",
  401: "Missing, expired or revoked credentials, or a failed sign-in",
  403: "Not allowed: `forbidden`, `module_disabled`, `tenant_mismatch` or `csrf_failed`",
  404: "Not found",
  409: "Conflict with the current state",
  413: "Body over 1 MiB",
  415: "Body is not JSON",
  422: "Validation error",
  429: "Rate limited; see Retry-After",
  500: "Unexpected failure",
  503: "The database does not answer",
};

/** Named schemas the routes answer with; they become components.schemas (and a typed client's types). */
const named = new Map<string, TSchema>([
  ["ValidationError", ValidationError],
  ["HTTPValidationError", HTTPValidationError],
  ["ErrorBody", ErrorBody],
]);

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ content: { "application/json": { schema } } });

export interface RouteDoc {
  summary: string;
  tags: string[];
  /** Success statuses and what they answer: a named schema, or null for an empty body. */
  ok: Record<number, readonly [name: string, schema: TSchema] | null>;
  /** Needs the bearer token or the session cookie: 401 and 403 come with it. */
  auth?: boolean;
  /** Further error statuses this route answers, beyond 422 and 500. */
  errors?: number[];
  description?: string;
  /** Query parameters a route reads by hand (QueryReader), which no route schema declares. */
  parameters?: unknown[];
}

/**
 * The `detail` of a route: its OpenAPI operation. Responses are described here rather than as
 * Elysia `response` schemas, which would also be checked on every answer at run time.
 */
export function doc(d: RouteDoc): { detail: DocumentDecoration } {
  const responses: NonNullable<DocumentDecoration["responses"]> = {};
  for (const [status, body] of Object.entries(d.ok)) {
    if (body) named.set(body[0], body[1]);
    responses[status] = { description: REASONS[Number(status)] ?? "OK", ...(body ? json(ref(body[0])) : {}) } as never;
  }
  const errors = new Set([...(d.auth ? [401, 403] : []), ...(d.errors ?? []), 422, 500]);
  for (const status of [...errors].sort()) {
    responses[status] = { description: REASONS[status] ?? "Error", ...json(ref(status === 422 ? "HTTPValidationError" : "ErrorBody")) } as never;
  }
  return {
    detail: {
      summary: d.summary,
      tags: d.tags,
      ...(d.description ? { description: d.description } : {}),
      ...(d.parameters ? { parameters: d.parameters as never } : {}),
      ...(d.auth ? { security: [{ bearer: [] }, { cookie: [] }] } : { security: [] }),
      responses,
    },
  };
}

interface Operation {
  requestBody?: { required?: boolean; content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, unknown>;
}

/** Elysia's `/users/:id` is OpenAPI's `/users/{id}`. */
const openApiPath = (path: string) => path.replace(/:([^/]+)/g, "{$1}");
const isOptional = (schema: unknown) =>
  typeof schema === "object" && schema !== null && (schema as Record<symbol, unknown>)[Symbol.for("TypeBox.Optional")] === "Optional";

const COERCED_FROM_TEXT = new Set(["integer", "numeric", "boolean"]);

/**
 * Plain JSON Schema for an answer: TypeBox's symbol keys dropped, and Elysia's coercing types
 * (t.Integer is "an integer, or text that parses as one", for query strings) reduced to what a
 * response really holds.
 */
function plain(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(plain);
  if (typeof schema !== "object" || schema === null) return schema;
  const s = schema as Record<string, unknown>;
  const anyOf = s.anyOf as Record<string, unknown>[] | undefined;
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
  // The generator marks every body required; a route whose body schema is t.Optional takes none.
  for (const r of inner.getGlobalRoutes()) {
    const op = generated[openApiPath(r.path)]?.[r.method.toLowerCase()];
    if (!op?.requestBody) continue;
    if (isOptional(r.hooks.body)) op.requestBody.required = false;
    // Request bodies get the same plain JSON Schema as answers: no 3.0 `nullable`, no coercion unions.
    for (const media of Object.values(op.requestBody.content ?? {})) media.schema = plain(media.schema);
    // Every route with a body can meet the body reader's refusals (src/http/body.ts).
    op.responses ??= {};
    for (const status of [413, 415]) op.responses[status] ??= { description: REASONS[status]!, ...json(ref("ErrorBody")) };
  }
  // A route mounted at its plugin's prefix ("/users" + "/") answers without the slash too.
  const paths = Object.fromEntries(Object.entries(generated).map(([path, ops]) => [path.length > 1 ? path.replace(/\/$/, "") : path, ops]));
  return {
    openapi: "3.1.1",
    info: {
      title: "Workspace Suite API",
      version,
      description:
        "Sign-in with 2FA and magic links, sessions, organizations and invitations, and a CRM. " +
        "A request's organization is named by its Host (`acme.<base domain>`) or the `X-Tenant` header.",
    },
    servers: [{ url: "/" }],
    tags: [
      { name: "auth", description: "Sign-in, tokens and sessions" },
      { name: "2fa", description: "TOTP second factor" },
      { name: "users", description: "Members and invitations" },
      { name: "crm", description: "Deals, accounts, contacts and pipeline stages" },
      { name: "operations", description: "Health" },
    ],
    paths,
    components: {
      schemas: Object.fromEntries([...named].map(([name, schema]) => [name, plain(JSON.parse(JSON.stringify(schema)))])),
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "The access token from sign-in." },
        cookie: { type: "apiKey", in: "cookie", name: "svc_session", description: "The session cookie set by sign-in (browsers)." },
      },
    },
  };
}
