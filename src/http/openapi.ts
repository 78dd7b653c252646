import { type DocumentDecoration, type TSchema, t } from "elysia";
import { ERROR_CODE, errors } from "../kernel/errors";

// What routes say about themselves for the API description (`doc()`), and the pieces every
// operation shares. The document itself is put together in openapi-document.ts.

/** One item of the 422 body (a fixed shape: docs/interface.md#errors). */
export const ValidationError = t.Object(
  {
    loc: t.Array(t.Union([t.String(), t.Integer()]), { description: 'Where: `["body", "email"]`, `["query", "size"]`, `["path", "id"]`' }),
    msg: t.String(),
    type: t.String({ description: "What failed, as Pydantic names it: `missing`, `string_too_short`, `json_invalid`…" }),
    input: t.Optional(t.Any()),
    ctx: t.Optional(t.Record(t.String(), t.Any())),
  },
  { title: "ValidationError" },
);
/** The 422 body: an object with an optional `detail`, a list of items (docs/interface.md#errors). */
export const HTTPValidationError = t.Object({ detail: t.Optional(t.Array(ValidationError)) }, { title: "HTTPValidationError" });
/** Every other error (docs/interface.md#errors). */
export const ErrorBody = t.Object(
  {
    detail: t.String({ description: "A sentence for people" }),
    code: t.String({ pattern: ERROR_CODE.source, description: "What went wrong, for programs: an identifier that starts with a letter" }),
  },
  { title: "ErrorBody" },
);

/** One tag per part of the API, by URL: /auth, /auth/2fa, /users, /crm, /health, /metrics, /tls. */
export const TAGS = {
  auth: "Signup, sign-in (password, magic link, invitation), tokens and sessions (/api/v1/auth)",
  "two-factor": "The TOTP second factor and its backup codes (/api/v1/auth/2fa)",
  passkeys: "Passkeys (WebAuthn): register, list, rename, remove, and sign in with one (/api/v1/auth/passkeys)",
  users: "The team: members and invitations (/api/v1/users)",
  organization: "The caller's organization: its name and modules (/api/v1/tenant)",
  crm: "Deals, accounts, contacts and pipeline stages (/api/v1/crm)",
  audit: "The organization's audit log, for its admins (/api/v1/audit-log)",
  events: "The organization's event log and its live stream (Server-Sent Events) (/api/v1/events)",
  health: "Whether the server and its database answer (/api/v1/health)",
  tls: "The reverse proxy's questions before it gets a certificate for a host name (/api/v1/tls)",
  metrics: "This instance's metrics, for the operator's Prometheus (/api/v1/metrics)",
  operator: "The server's operators: their sign-in and console, on the base domain only (/api/v1/operator)",
  webhooks: "The organization's signed webhooks (Standard Webhooks) and their delivery log, for admins (/api/v1/webhooks)",
} as const;
export type Tag = keyof typeof TAGS;

export const REASONS: Record<number, string> = {
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No content",
  302: "Found: a redirect (Location)",
  400: "Bad request",
  401: "Missing, expired or revoked credentials, or a failed sign-in",
  403: "Not allowed: `forbidden`, `module_disabled`, `tenant_mismatch`, `tenant_disabled` (the operator disabled the organization) or `csrf_failed`",
  404: "Not found",
  409: "Conflict with the current state",
  413: "Body over 1 MiB",
  415: "Body is not JSON",
  422: "Validation error",
  429: "Rate limited; see Retry-After",
  500: "Unexpected failure",
  503: "The database does not answer",
  507: "Out of storage space: nothing was saved (`storage_full`); see Retry-After",
};

/** components.headers: what answers carry besides their body. */
export const HEADERS = {
  WWWAuthenticate: {
    description: "On every 401 (RFC 9110 §11.6.1): the scheme to authenticate with.",
    schema: { type: "string", const: "Bearer" },
  },
  RetryAfter: { description: "On every 429 and 507: seconds until this caller may try again.", schema: { type: "integer", minimum: 1 } },
  SetSessionCookies: {
    description:
      "Two cookies: `svc_session`, the access token (`Path=/`, `SameSite=Lax`, lives as long as the token), and `svc_refresh`, the refresh token " +
      "(`Path=/api/v1/auth`, `SameSite=Strict`, lives as long as the session). Both `HttpOnly`, `Secure` unless the base domain is localhost, " +
      "and scoped to the base domain so that every organization's subdomain shares them.",
    schema: { type: "string" },
  },
  ClearSessionCookies: {
    description: "Clears `svc_session` and `svc_refresh`: both sent empty with `Max-Age=0`, with the Path and Domain that set them.",
    schema: { type: "string" },
  },
} as const;

/** The subdomain of an organization, as X-Tenant names it (any case: it is compared in lower case). */
const X_TENANT_PATTERN = "^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$";

/** components.parameters: the header every operation may carry. */
export const PARAMETERS = {
  XTenant: {
    name: "X-Tenant",
    in: "header",
    required: false,
    description:
      "The organization, by its subdomain (`acme`), for API clients that do not call `acme.<base domain>`. It must agree with the Host " +
      "and with the credentials' organization (else 403 `tenant_mismatch`); where sign-in looks it up, an unknown one is 404 `tenant_not_found` " +
      "and a disabled one 403 `tenant_disabled`.",
    schema: { type: "string", maxLength: 63, pattern: X_TENANT_PATTERN },
    example: "acme",
  },
  IdempotencyKey: {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description:
      "Makes a retried create safe: a client-chosen key (a UUID), one per intended record, kept 24 hours per organization and user. " +
      "A retry with the same key, method, path and body gets the first answer again (same status and body, header `Idempotent-Replayed: true`) " +
      "and creates nothing; the same key with another body is 409 `idempotency_key_reused`; a retry while the first is still being processed is " +
      "409 `idempotency_key_in_progress` (with Retry-After). A refused create (4xx) keeps nothing: the key can be sent again with a corrected body. " +
      "Over 255 characters, empty, or with control characters: 422.",
    schema: { type: "string", minLength: 1, maxLength: 255 },
    example: "3f1c2a9e-8a57-4f0e-9c39-0d7c1b5e2f64",
  },
} as const;

/**
 * A schema the validator sees only after a route's `transform` has converted what the client sent
 * (a deal's value: a JSON number becomes its text first). The API description shows `form`, what
 * clients may send, in its place; validation is unchanged.
 */
export const DOCUMENTED_AS = "x-documented-as";
export const documentedAs = (form: Record<string, unknown>) => ({ [DOCUMENTED_AS]: form });

/** Named schemas the routes answer with; they become components.schemas (and a typed client's types). */
export const named = new Map<string, TSchema>([
  ["ValidationError", ValidationError],
  ["HTTPValidationError", HTTPValidationError],
  ["ErrorBody", ErrorBody],
]);

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: unknown) => ({ content: { "application/json": { schema } } });
const header = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

/** What an error status answers most often, as its example: the very error the server builds. */
const EXAMPLES: Record<number, { detail: string; code: string }> = Object.fromEntries(
  [errors.notAuthenticated(), errors.forbidden(), errors.notFound(), errors.payloadTooLarge(), errors.unsupportedMediaType(), errors.rateLimited(60), errors.internal(), errors.storageFull()].map(
    (e) => [e.status, { detail: e.detail, code: e.code }],
  ),
);
const EXAMPLE_422 = { detail: [{ loc: ["body", "email"], msg: "Field required", type: "missing" }] };

/** The declared headers of an error status. */
export const errorHeaders = (status: number) =>
  status === 401 ? { headers: { "WWW-Authenticate": header("WWWAuthenticate") } } : status === 429 || status === 507 ? { headers: { "Retry-After": header("RetryAfter") } } : {};

/** An error response: its reason (with the codes a route names for it), body schema, example and headers. */
export function errorResponse(status: number, codes?: readonly string[]) {
  const reason = REASONS[status] ?? "Error";
  const example = status === 422 ? EXAMPLE_422 : codes ? { detail: `${reason.replace(/ \(.*\)$/, "")}.`, code: codes[0] } : EXAMPLES[status];
  return {
    description: codes ? `${reason}: ${codes.map((c) => `\`${c}\``).join(", ")}` : reason,
    ...errorHeaders(status),
    content: { "application/json": { schema: ref(status === 422 ? "HTTPValidationError" : "ErrorBody"), ...(example ? { example } : {}) } },
  };
}

export interface RouteDoc {
  summary: string;
  /** The one tag of the route's part of the API (TAGS). */
  tags: readonly [Tag];
  /** Success statuses and what they answer: a named schema, or null for an empty body. */
  ok: Record<number, readonly [name: string, schema: TSchema] | null>;
  /** Needs the bearer token or the session cookie: 401 and 403 come with it. */
  auth?: boolean;
  /** Further error statuses this route answers, beyond 422, 500 and 507. */
  errors?: number[];
  description?: string;
  /** Query parameters a route reads by hand (QueryReader), which no route schema declares. */
  parameters?: unknown[];
  /** Its success answer sets the session cookies, or clears them. */
  cookies?: "set" | "clear";
  /** The codes of an error status whose code depends on the route (400, 409, 503), most frequent first. */
  codes?: Partial<Record<number, readonly string[]>>;
  /** A create that takes the Idempotency-Key header (src/idempotency/create-once.ts). */
  idempotent?: boolean;
}

const IDEMPOTENCY_CODES = ["idempotency_key_reused", "idempotency_key_in_progress"] as const;

/**
 * The `detail` of a route: its OpenAPI operation. Responses are described here rather than as
 * Elysia `response` schemas, which would also be checked on every answer at run time.
 */
export function doc(d: RouteDoc): { detail: DocumentDecoration } {
  const responses: NonNullable<DocumentDecoration["responses"]> = {};
  const cookies = d.cookies && { headers: { "Set-Cookie": header(d.cookies === "set" ? "SetSessionCookies" : "ClearSessionCookies") } };
  for (const [status, body] of Object.entries(d.ok)) {
    if (body) named.set(body[0], body[1]);
    responses[status] = { description: REASONS[Number(status)] ?? "OK", ...cookies, ...(body ? json(ref(body[0])) : {}) } as never;
  }
  const failures = new Set([...(d.auth ? [401, 403] : []), ...(d.errors ?? []), ...(d.idempotent ? [409] : []), 422, 500, 507]);
  const codes = d.idempotent ? { ...d.codes, 409: [...(d.codes?.[409] ?? []), ...IDEMPOTENCY_CODES] } : d.codes;
  for (const status of [...failures].sort()) responses[status] = errorResponse(status, codes?.[status]) as never;
  const parameters = [...(d.parameters ?? []), ...(d.idempotent ? [{ $ref: "#/components/parameters/IdempotencyKey" }] : [])];
  return {
    detail: {
      summary: d.summary,
      tags: [...d.tags],
      ...(d.description ? { description: d.description } : {}),
      ...(parameters.length ? { parameters: parameters as never } : {}),
      ...(d.auth ? { security: [{ bearer: [] }, { cookie: [] }] } : { security: [] }),
      responses,
    },
  };
}
