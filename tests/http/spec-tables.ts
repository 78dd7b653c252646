/**
 * The fixed shapes of docs/interface.md#fixed-shapes as test data: the operations every client of
 * the earlier service relies on, and the Deal, Deal page, Invitation, invite request and
 * ValidationError tables. The OpenAPI conformance test checks the served document against them,
 * field by field.
 */

export const SPEC_ENDPOINTS: Array<[method: string, path: string]> = [
  ["POST", "/api/v1/auth/login"],
  ["POST", "/api/v1/auth/magic-link"],
  ["POST", "/api/v1/auth/magic-verify"],
  ["POST", "/api/v1/auth/2fa/setup"],
  ["POST", "/api/v1/auth/2fa/confirm"],
  ["POST", "/api/v1/auth/2fa/verify"],
  ["POST", "/api/v1/auth/2fa/disable"],
  ["GET", "/api/v1/auth/2fa/status"],
  ["POST", "/api/v1/auth/2fa/backup-codes"],
  ["POST", "/api/v1/auth/refresh"],
  ["GET", "/api/v1/auth/sessions"],
  ["POST", "/api/v1/auth/sessions/revoke"],
  ["POST", "/api/v1/auth/sessions/revoke-others"],
  ["POST", "/api/v1/auth/logout-all"],
  ["POST", "/api/v1/auth/signup"],
  ["POST", "/api/v1/users/invite"],
  ["GET", "/api/v1/crm/deals"],
];

/** A field's type, in the words of the fixed tables. */
export type SpecType =
  | "string"
  | "integer"
  | "boolean"
  | "datetime"
  | "date"
  | "decimal text"
  | "map string to any"
  | "list of Deal"
  | "list of location items"
  | "any"
  | "object";

export interface SpecField {
  name: string;
  type: SpecType;
  required: boolean;
  nullable: boolean;
}

const f = (name: string, type: SpecType, required: boolean, nullable: boolean): SpecField => ({ name, type, required, nullable });

// Deal (DealRead). Required fields without a default are never null.
export const SPEC_DEAL: SpecField[] = [
  f("title", "string", true, false),
  f("account_id", "string", true, false),
  f("id", "string", true, false),
  f("tenant_id", "string", true, false),
  f("created_at", "datetime", true, false),
  f("updated_at", "datetime", true, false),
  f("value", "decimal text", false, false),
  f("currency", "string", false, false),
  f("stage", "string", false, false),
  f("close_date", "date", false, true),
  f("probability", "integer", false, true),
  f("assigned_to", "string", false, true),
  f("notes", "string", false, true),
  f("custom_data", "map string to any", false, true),
  f("contact_id", "string", false, true),
  f("pipeline_stage_id", "string", false, true),
  f("pipeline_stage_name", "string", false, true),
  f("pipeline_stage_color", "string", false, true),
  f("is_won", "boolean", false, false),
  f("is_lost", "boolean", false, false),
  f("account_name", "string", false, true),
  f("contact_name", "string", false, true),
  f("assignee_name", "string", false, true),
  f("assignee_email", "string", false, true),
  // Added with the deal page (issue 32): optional, so the earlier service's clients are unaffected.
  f("stage_changed_at", "datetime", false, false),
];

/** The Deal's fixed defaults. */
export const SPEC_DEAL_DEFAULTS: Record<string, unknown> = { value: "0.00", currency: "USD", stage: "new", is_won: false, is_lost: false };

/** Deal page: none of its fields is nullable. */
export const SPEC_DEAL_PAGE: SpecField[] = [
  f("items", "list of Deal", true, false),
  f("total", "integer", true, false),
  f("page", "integer", true, false),
  f("size", "integer", true, false),
  f("pages", "integer", true, false),
];

export const SPEC_INVITATION: SpecField[] = [
  f("id", "string", true, false),
  f("email", "string", true, false),
  f("invited_by", "string", true, true),
  f("expires_at", "datetime", true, false),
  f("accepted_at", "datetime", true, true),
  f("revoked_at", "datetime", true, true),
  f("created_at", "datetime", true, false),
  f("profile_id", "string", false, true),
  f("role_id", "string", false, true),
];

export const SPEC_INVITE_REQUEST: SpecField[] = [
  f("email", "string", true, false),
  f("profile_id", "string", false, true),
  f("role_id", "string", false, true),
];

export const SPEC_VALIDATION_ERROR: SpecField[] = [
  f("loc", "list of location items", true, false),
  f("msg", "string", true, false),
  f("type", "string", true, false),
  f("input", "any", false, false),
  f("ctx", "object", false, false),
];
