/**
 * What every error `code` looks like: an identifier that starts with a letter, so that clients can
 * map codes to enum members (`2fa_already_enabled` could not be one).
 */
export const ERROR_CODE = /^[a-z][a-z0-9_]*$/;

/** The one error of the suite: a status, a snake_case code and a human sentence (docs/interface.md#errors). */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = "AppError";
    // A programming error, refused where it is made. Every code is a literal in the source and
    // tests/http/error-codes.test.ts builds each one, so this never fires while serving; if it
    // did, the request would get a 500 from onError, never end the process.
    if (!ERROR_CODE.test(code)) throw new TypeError(`AppError code ${JSON.stringify(code)} is not an identifier starting with a letter`);
  }
}

/** One item of a FastAPI-style 422 body. */
export interface ValidationItem {
  loc: Array<string | number>;
  msg: string;
  type: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

/** A validation failure raised by our own code (a rule TypeBox cannot express). */
export class RequestValidationError extends Error {
  constructor(readonly items: ValidationItem[]) {
    super("request validation failed");
    this.name = "RequestValidationError";
  }
}

/** Every 401 names its scheme (RFC 9110 §15.5.2: a 401 MUST carry WWW-Authenticate), failed sign-ins included. */
export const BEARER = { "WWW-Authenticate": "Bearer" };

export const errors = {
  notAuthenticated: () => new AppError(401, "not_authenticated", "Not authenticated.", BEARER),
  tokenExpired: () => new AppError(401, "token_expired", "The token has expired.", BEARER),
  tokenInvalid: () => new AppError(401, "token_invalid", "The token is not valid.", BEARER),
  sessionRevoked: () => new AppError(401, "session_revoked", "The session has ended. Sign in again.", BEARER),
  invalidCredentials: () => new AppError(401, "invalid_credentials", "Incorrect email or password.", BEARER),
  invalidToken: () => new AppError(401, "invalid_token", "This link is not valid: it was already used, it expired, or it never existed.", BEARER),
  forbidden: (detail = "You do not have permission to do this.") => new AppError(403, "forbidden", detail),
  moduleDisabled: (module: string) => new AppError(403, "module_disabled", `The ${module} module is not enabled for this organization.`),
  tenantMismatch: () => new AppError(403, "tenant_mismatch", "These credentials belong to another organization."),
  tenantRequired: () =>
    new AppError(400, "tenant_required", "This email belongs to several organizations: name one with the X-Tenant header or its subdomain."),
  tenantNotFound: () => new AppError(404, "tenant_not_found", "No organization has this subdomain."),
  /** The operator disabled the organization (`suite tenant disable`): its data is kept, nothing answers. */
  policySetupRequired: (what: "passkey" | "passkey_or_2fa") =>
    new AppError(
      403,
      "policy_setup_required",
      what === "passkey"
        ? "Your organization requires admins to sign in with a passkey: add one in My account to continue."
        : "Your organization requires a passkey or two-factor authentication: set one up in My account to continue.",
    ),
  requiredByPolicy: (detail: string) => new AppError(409, "required_by_policy", detail),
  tenantDisabled: () => new AppError(403, "tenant_disabled", "This organization is disabled: ask the operator of this server."),
  csrf: () => new AppError(403, "csrf_failed", "Cross-site request refused."),
  notFound: (what = "Not found.") => new AppError(404, "not_found", what),
  conflict: (code: string, detail: string) => new AppError(409, code, detail),
  invitationInvalid: () =>
    new AppError(400, "invitation_invalid", "This invitation is not valid: it was already used, revoked, replaced or has expired."),
  rateLimited: (retryAfterSeconds: number) =>
    new AppError(429, "rate_limited", "Too many attempts. Try again later.", { "Retry-After": String(Math.max(1, Math.ceil(retryAfterSeconds))) }),
  payloadTooLarge: () => new AppError(413, "payload_too_large", "The request body is larger than 1 MiB."),
  unsupportedMediaType: () => new AppError(415, "unsupported_media_type", "Request bodies must be JSON (Content-Type: application/json)."),
  internal: () => new AppError(500, "internal_error", "Something went wrong on our side."),
  /** The disk is full, or under the reserve kept for small writes (db/disk-room.ts): nothing was written; retry later. */
  storageFull: (
    detail = "The server has run out of storage space, so this change was not saved. Try again in a few minutes; if it keeps happening, tell the server's operator.",
  ) => new AppError(507, "storage_full", detail, { "Retry-After": "60" }),
};
