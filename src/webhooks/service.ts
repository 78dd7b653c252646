import { randomBytes } from "node:crypto";
import { errors, RequestValidationError, type ValidationItem } from "../kernel/errors";
import { newId, toIso } from "../kernel/ids";
import { offsetOf, pageOf, type Page } from "../kernel/paging";
import { type Principal, requireAdmin } from "../kernel/principal";
import type { Sealer } from "../security/secret-box";
import { EVENT_TYPES, eventId } from "../events/repo";
import { type DeliveryRead, MAX_ENDPOINTS, type WebhookCreate, type WebhookList, type WebhookPatch, type WebhookRead, type WebhookWithSecret } from "./model";
import type { DeliveryRow, EndpointRow, WebhooksStore } from "./repo";

export interface WebhooksDeps {
  now: () => number;
  store: WebhooksStore;
  /** Seals endpoint secrets, bound to the endpoint's id. */
  sealer: Sealer;
  /** Whether http (not only https) endpoints are allowed (SUITE_WEBHOOK_HTTP: the operator's choice). */
  allowHttp: boolean;
  /** 403 reauthentication_required unless the session proved its first factor recently. */
  requireRecentProof: (p: Principal) => void;
  /** Whether the outbound guard refuses the URL's host (loopback, private… unless SUITE_OUTBOUND_ALLOW allows it). */
  addressRefused: (url: string) => Promise<boolean>;
  /** Wakes the sender (a test or a retry is due now). */
  kick: () => void;
}

/** How long the previous secret keeps signing after a rotation. */
export const PREVIOUS_SECRET_MS = 24 * 3_600_000;
/** Deliveries of a deleted endpoint go in steps of this many (each its own short transaction). */
const REMOVE_STEP = 1000;
const KNOWN_TYPES = new Set<string>(EVENT_TYPES);

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`;

const invalid = (loc: (string | number)[], msg: string): ValidationItem => ({ loc: ["body", ...loc], msg: `Value error, ${msg}`, type: "value_error" });

export const toDeliveryRead = (d: DeliveryRow): DeliveryRead => ({
  id: d.id,
  event_id: d.event_seq === null ? null : eventId(Number(d.event_seq)),
  event_type: d.event_type,
  status: d.status,
  attempts: Number(d.attempts),
  last_response_status: d.last_status === null ? null : Number(d.last_status),
  last_duration_ms: d.last_duration_ms === null ? null : Number(d.last_duration_ms),
  last_error: d.last_error,
  next_attempt_at: d.status === "pending" ? toIso(Number(d.next_attempt_at)) : null,
  created_at: toIso(Number(d.created_at)),
  updated_at: toIso(Number(d.updated_at)),
});

/** An organization's webhook endpoints (admins): create, change, rotate, test, and their delivery log. */
export function createWebhooksService(d: WebhooksDeps) {
  const toRead = (r: EndpointRow): WebhookRead => ({
    id: r.id,
    url: r.url,
    events: JSON.parse(r.events) as string[],
    description: r.description,
    enabled: r.enabled === 1,
    disabled_reason: (r.disabled_reason as WebhookRead["disabled_reason"]) ?? null,
    previous_secret_expires_at: r.previous_secret_until !== null && Number(r.previous_secret_until) > d.now() ? toIso(Number(r.previous_secret_until)) : null,
    created_at: toIso(Number(r.created_at)),
    updated_at: toIso(Number(r.updated_at)),
  });

  /** The URL and event types, checked together so that one 422 names every problem. */
  async function check(body: { url?: string; events?: string[] }): Promise<{ url?: string; events?: string }> {
    const items: ValidationItem[] = [];
    let url: string | undefined;
    if (body.url !== undefined) {
      let u: URL | null = null;
      try {
        u = new URL(body.url.trim());
      } catch {
        items.push(invalid(["url"], "give a full address such as https://example.com/webhooks"));
      }
      if (u) {
        if (u.protocol !== "https:" && !(u.protocol === "http:" && d.allowHttp)) {
          items.push(invalid(["url"], d.allowHttp ? "the address must start with https:// or http://" : "the address must start with https://"));
        } else if (u.username || u.password) items.push(invalid(["url"], "the address must not hold a user name or password"));
        else if (await d.addressRefused(u.href)) {
          items.push(
            invalid(["url"], "the host is on a private, loopback, link-local or reserved address, which this server does not send to: give a public address, or ask the server's operator to allow this one (SUITE_OUTBOUND_ALLOW)"),
          );
        } else url = u.href;
      }
    }
    let events: string | undefined;
    if (body.events !== undefined) {
      body.events.forEach((type, i) => {
        if (type !== "*" && !KNOWN_TYPES.has(type)) items.push(invalid(["events", i], `unknown event type; use * or one of ${EVENT_TYPES.join(", ")}`));
      });
      const unique = [...new Set(body.events)];
      events = JSON.stringify(unique.includes("*") ? ["*"] : unique);
    }
    if (items.length > 0) throw new RequestValidationError(items);
    return { url, events };
  }

  async function endpointOr404(p: Principal, id: string): Promise<EndpointRow> {
    const row = await d.store.byId(p.tenantId, id);
    if (!row) throw errors.notFound("No webhook with this id in this organization.");
    return row;
  }

  async function list(p: Principal): Promise<WebhookList> {
    requireAdmin(p);
    return { items: (await d.store.list(p.tenantId)).map(toRead) };
  }

  async function get(p: Principal, id: string): Promise<WebhookRead> {
    requireAdmin(p);
    return toRead(await endpointOr404(p, id));
  }

  // Creating or changing a webhook sends the organization's data elsewhere: a step-up, as adding a sign-in provider.
  async function create(p: Principal, body: WebhookCreate): Promise<WebhookWithSecret> {
    requireAdmin(p);
    d.requireRecentProof(p);
    const checked = await check(body);
    if ((await d.store.count(p.tenantId)) >= MAX_ENDPOINTS) {
      throw errors.conflict("webhook_limit_reached", `An organization can have at most ${MAX_ENDPOINTS} webhooks. Delete one you no longer use, then add this one.`);
    }
    const id = newId();
    const secret = newWebhookSecret();
    const now = d.now();
    const row: EndpointRow = {
      tenant_id: p.tenantId,
      id,
      url: checked.url!,
      description: body.description?.trim() || null,
      events: checked.events!,
      enabled: body.enabled === false ? 0 : 1,
      disabled_reason: null,
      secret_sealed: d.sealer.seal(secret, id),
      previous_secret_sealed: null,
      previous_secret_until: null,
      created_at: now,
      updated_at: now,
    };
    await d.store.insert(row);
    return { ...toRead(row), secret };
  }

  async function patch(p: Principal, id: string, body: WebhookPatch): Promise<WebhookRead> {
    requireAdmin(p);
    d.requireRecentProof(p);
    const row = await endpointOr404(p, id);
    const checked = await check(body);
    const enabled = body.enabled === undefined ? row.enabled : body.enabled ? 1 : 0;
    await d.store.update(p.tenantId, id, {
      url: checked.url ?? row.url,
      events: checked.events ?? row.events,
      description: body.description === undefined ? row.description : body.description?.trim() || null,
      enabled,
      // Enabled again by an admin: the server's reason no longer holds.
      disabled_reason: enabled === 1 ? null : row.disabled_reason,
      updated_at: d.now(),
    });
    return toRead((await d.store.byId(p.tenantId, id))!);
  }

  async function rotate(p: Principal, id: string): Promise<WebhookWithSecret> {
    requireAdmin(p);
    d.requireRecentProof(p);
    const row = await endpointOr404(p, id);
    const secret = newWebhookSecret();
    const now = d.now();
    await d.store.rotate(p.tenantId, id, d.sealer.seal(secret, id), row.secret_sealed, now + PREVIOUS_SECRET_MS, now);
    return { ...toRead((await d.store.byId(p.tenantId, id))!), secret };
  }

  /** Stops new deliveries first, then deletes the old ones in short steps, then the endpoint. */
  async function remove(p: Principal, id: string): Promise<void> {
    requireAdmin(p);
    d.requireRecentProof(p);
    const row = await endpointOr404(p, id);
    if (row.enabled === 1) await d.store.update(p.tenantId, id, { ...row, enabled: 0, updated_at: d.now() });
    while ((await d.store.removeDeliveries(p.tenantId, id, REMOVE_STEP)) === REMOVE_STEP) await new Promise((r) => setImmediate(r));
    await d.store.remove(p.tenantId, id);
  }

  const disabledError = () => errors.conflict("webhook_disabled", "This webhook is disabled. Enable it first, then try again.");

  async function sendTest(p: Principal, id: string): Promise<DeliveryRead> {
    requireAdmin(p);
    const row = await endpointOr404(p, id);
    if (row.enabled !== 1) throw disabledError();
    const now = d.now();
    const deliveryId = `t${newId()}`;
    const event = {
      id: deliveryId,
      type: "webhook.test",
      created_at: toIso(now),
      organization_id: p.tenantId,
      actor: { type: "user", id: p.userId },
      data: { webhook_id: id, message: "A test event sent from the Webhooks screen." },
    };
    const delivery: DeliveryRow = {
      tenant_id: p.tenantId, id: deliveryId, endpoint_id: id, event_seq: null, event_type: "webhook.test", payload: JSON.stringify(event),
      status: "pending", attempts: 0, next_attempt_at: now, window_start: now, last_status: null, last_duration_ms: null, last_error: null,
      created_at: now, updated_at: now,
    };
    await d.store.insertTest(delivery);
    d.kick();
    return toDeliveryRead(delivery);
  }

  async function deliveries(p: Principal, id: string, q: { page: number; size: number }): Promise<Page<DeliveryRead>> {
    requireAdmin(p);
    await endpointOr404(p, id);
    const [rows, total] = await Promise.all([d.store.deliveries(p.tenantId, id, q.size, offsetOf(q.page, q.size)), d.store.deliveryCount(p.tenantId, id)]);
    return pageOf(rows.map(toDeliveryRead), total, q.page, q.size);
  }

  /** Sends a delivery again (also a delivered one): pending, due now, with a new three-day window. */
  async function retry(p: Principal, id: string, deliveryId: string): Promise<DeliveryRead> {
    requireAdmin(p);
    const row = await endpointOr404(p, id);
    if (row.enabled !== 1) throw disabledError();
    const delivery = await d.store.delivery(p.tenantId, id, deliveryId);
    if (!delivery) throw errors.notFound("No delivery with this id for this webhook.");
    await d.store.requeue(p.tenantId, deliveryId, d.now());
    d.kick();
    return toDeliveryRead((await d.store.delivery(p.tenantId, id, deliveryId))!);
  }

  return { list, get, create, patch, rotate, remove, sendTest, deliveries, retry };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
