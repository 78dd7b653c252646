import { t, type Static } from "elysia";
import { SINGLE_LINE_PATTERN } from "../kernel/validation";

export const MAX_URL = 2000;
export const MAX_DESCRIPTION = 200;
/** Endpoints an organization may have. */
export const MAX_ENDPOINTS = 20;

const Url = t.String({ minLength: 1, maxLength: MAX_URL, pattern: SINGLE_LINE_PATTERN, description: "https (http only when the server's operator allows it); the Standard Webhooks POST goes here" });
const Events = t.Array(t.String({ minLength: 1, maxLength: 64 }), {
  minItems: 1,
  maxItems: 50,
  description: "Event types (as GET /api/v1/events names them), or `*` for every one",
});
const Description = t.Nullable(t.String({ maxLength: MAX_DESCRIPTION, pattern: SINGLE_LINE_PATTERN }));

export const WebhookCreate = t.Object({
  url: Url,
  events: Events,
  description: t.Optional(Description),
  enabled: t.Optional(t.Boolean()),
});
export type WebhookCreate = Static<typeof WebhookCreate>;

export const WebhookPatch = t.Object({
  url: t.Optional(Url),
  events: t.Optional(Events),
  description: t.Optional(Description),
  enabled: t.Optional(t.Boolean()),
});
export type WebhookPatch = Static<typeof WebhookPatch>;

const Time = t.String({ format: "date-time" });

const webhookFields = {
  id: t.String(),
  url: t.String(),
  events: t.Array(t.String()),
  description: t.Nullable(t.String()),
  enabled: t.Boolean(),
  disabled_reason: t.Nullable(t.Union([t.Literal("gone"), t.Literal("failing")], { description: "Why the server disabled it: `gone` (the receiver answered 410), `failing` (no 2xx for three days)" })),
  previous_secret_expires_at: t.Nullable(t.String({ format: "date-time", description: "After a rotation: until when the previous secret signs too" })),
  created_at: Time,
  updated_at: Time,
};

export const WebhookRead = t.Object(webhookFields, { title: "WebhookRead" });
export type WebhookRead = Static<typeof WebhookRead>;

/** The create's and the rotation's answer: the only ones that show the secret. */
export const WebhookWithSecret = t.Object(
  { ...webhookFields, secret: t.String({ description: "`whsec_…`: verify the `webhook-signature` header with it (Standard Webhooks). Shown only here." }) },
  { title: "WebhookWithSecret" },
);
export type WebhookWithSecret = Static<typeof WebhookWithSecret>;

export const WebhookList = t.Object({ items: t.Array(WebhookRead) }, { title: "WebhookList" });
export type WebhookList = Static<typeof WebhookList>;

export const DeliveryRead = t.Object(
  {
    id: t.String({ description: "The `webhook-id` header of every attempt" }),
    event_id: t.Nullable(t.String({ description: "The event's id (null for a test event)" })),
    event_type: t.String(),
    status: t.Union([t.Literal("pending"), t.Literal("delivered"), t.Literal("failed")]),
    attempts: t.Integer(),
    last_response_status: t.Nullable(t.Integer({ description: "The receiver's HTTP status at the last attempt (null: no answer)" })),
    last_duration_ms: t.Nullable(t.Integer()),
    last_error: t.Nullable(t.String({ description: "Why the last attempt failed without an answer: refused_address, unreachable, timeout, tls, redirect, too_large, event_expired" })),
    next_attempt_at: t.Nullable(t.String({ format: "date-time", description: "When it is tried next (pending only)" })),
    created_at: Time,
    updated_at: Time,
  },
  { title: "WebhookDeliveryRead" },
);
export type DeliveryRead = Static<typeof DeliveryRead>;
