/**
 * The names the screens give to the API's shapes, each read off an operation of the generated
 * document (schema.gen.ts) by its path: what GET /crm/deals/{id} answers is a Deal, whatever the
 * document calls its schema. Types only; nothing here is written by hand but the name.
 */
import type { Answer, Body, Query, Refusal } from "./operations";

/** One item of a list answer, bare or paged. */
type Item<L> = L extends { items: (infer I)[] } ? I : L extends (infer I)[] ? I : never;

/** A page of a paged list, of any item (the paging fields as every list answers them). */
export type Page<T> = Omit<Answer<"get", "/api/v1/crm/accounts">, "items"> & { items: T[] };

/** One 422 item, FastAPI's shape. */
export type ValidationItem = NonNullable<Refusal<"post", "/api/v1/auth/login", 422>["detail"]>[number];

// ---- sign-in, sessions, the organization ----
export type LoginAnswer = Answer<"post", "/api/v1/auth/login">;
export type TokenPair = Answer<"post", "/api/v1/auth/2fa/verify">;
export type SignupAnswer = Answer<"post", "/api/v1/auth/signup">;
export type Me = Answer<"get", "/api/v1/auth/me">;
export type User = Item<Answer<"get", "/api/v1/users">>;
export type Tenant = Answer<"get", "/api/v1/tenant">;
/** A module an organization can turn on or off. */
export type TenantModule = NonNullable<Body<"patch", "/api/v1/tenant">["modules"]>[number];
export type Profile = Item<Answer<"get", "/api/v1/users/profiles">>;
export type Session = Item<Answer<"get", "/api/v1/auth/sessions">>;
export type TwoFactorSetup = Answer<"post", "/api/v1/auth/2fa/setup">;
export type Invitation = Item<Answer<"get", "/api/v1/users/invitations">>;
export type InvitationStatus = NonNullable<Query<"get", "/api/v1/users/invitations">["status"]>;

// ---- CRM ----
export type Stage = Item<Answer<"get", "/api/v1/crm/pipeline-stages">>;
export type Account = Answer<"get", "/api/v1/crm/accounts/{id}">;
export type Contact = Answer<"get", "/api/v1/crm/contacts/{id}">;
export type Deal = Answer<"get", "/api/v1/crm/deals/{id}">;
export type DealWrite = Body<"post", "/api/v1/crm/deals">;
export type DealQuery = Query<"get", "/api/v1/crm/deals">;
export type DealSort = NonNullable<DealQuery["sort_by"]>;
export type DealActivity = Item<Answer<"get", "/api/v1/crm/deals/{id}/activities">>;
export type RecordActivity = Item<Answer<"get", "/api/v1/crm/accounts/{id}/activities">>;
export type Note = Answer<"post", "/api/v1/crm/deals/{id}/notes">;
export type DealSummary = Answer<"get", "/api/v1/crm/deals/summary">;
export type SavedView = Answer<"post", "/api/v1/crm/views">;
export type SavedViewQuery = SavedView["query"];
export type AuditQuery = Query<"get", "/api/v1/audit-log">;

// ---- CSV export and import ----
/** What an import reads (jobs of the bulk kinds are bulk changes of deals: web/deals/bulk-bar.tsx). */
export type TransferKind = Exclude<ImportJob["kind"], "deals_bulk" | "deals_bulk_undo">;
export type ImportJob = Answer<"get", "/api/v1/crm/jobs/{id}">;
export type ImportReport = Exclude<Answer<"post", "/api/v1/crm/deals/import">, ImportJob>;
export type ImportRowError = ImportJob["errors"][number];

// ---- sign-in providers ----
export type AuthProvider = Item<Answer<"get", "/api/v1/auth/providers">>;
export type ProviderKind = AuthProvider["kind"];
export type PublicProvider = Item<Answer<"get", "/api/v1/auth/providers/public">>;
export type Identity = Item<Answer<"get", "/api/v1/auth/identities">>;

// ---- the organization's event log ----
export type LiveEvent = Item<Answer<"get", "/api/v1/events">>;

// ---- webhooks ----
export type Webhook = Item<Answer<"get", "/api/v1/webhooks">>;
export type WebhookWithSecret = Answer<"post", "/api/v1/webhooks">;
export type WebhookDelivery = Item<Answer<"get", "/api/v1/webhooks/{id}/deliveries">>;
