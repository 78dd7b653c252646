import { Elysia, t } from "elysia";
import type { Context } from "../context";
import { authGuard } from "../http/auth-guard";
import { doc } from "../http/openapi";
import { listParameters, pageSchema } from "../http/page-schema";
import { type Principal, requireAdmin } from "../kernel/principal";
import { QueryReader, type RawQuery } from "../kernel/paging";
import { DeliveryRead, WebhookCreate, WebhookList, WebhookPatch, WebhookRead, WebhookWithSecret } from "./model";

const Id = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) });
const DeliveryId = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }), delivery_id: t.String({ minLength: 1, maxLength: 200 }) });
const STEP_UP =
  "Needs a recent sign-in: this session's last first-factor proof within `SUITE_REAUTH_WINDOW` seconds (default 600), else 403 `reauthentication_required` (renew it with `POST /api/v1/auth/reauthenticate`).";
const READ = ["WebhookRead", WebhookRead] as const;
const WITH_SECRET = ["WebhookWithSecret", WebhookWithSecret] as const;
const DELIVERY = ["WebhookDeliveryRead", DeliveryRead] as const;
const DISABLED = { 409: ["webhook_disabled"] };

const admins = ({ auth }: { auth: Principal }) => requireAdmin(auth);

/**
 * /api/v1/webhooks: the organization's signed webhooks (admins). Deliveries follow the Standard
 * Webhooks specification: headers webhook-id, webhook-timestamp and webhook-signature.
 */
export const webhookRoutes = (ctx: Context) =>
  new Elysia({ name: "webhook-routes", prefix: "/api/v1/webhooks", seed: ctx.id })
    .use(authGuard(ctx))
    .get("", ({ auth }) => ctx.webhooks.list(auth), {
      transform: admins,
      ...doc({ summary: "The organization's webhooks, oldest first (admins); never their secrets", tags: ["webhooks"], auth: true, ok: { 200: ["WebhookList", WebhookList] } }),
    })
    .post(
      "",
      async ({ auth, body, set }) => {
        const created = await ctx.webhooks.create(auth, body);
        set.status = 201;
        return created;
      },
      {
        body: WebhookCreate,
        transform: admins,
        ...doc({
          summary: "Add a webhook (admins): the answer shows its signing secret, the only time it is shown",
          description:
            "Every event of the listed types (or `*`) is POSTed to `url` as JSON (the event as GET /api/v1/events shows it), signed by the Standard Webhooks scheme " +
            "(`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>`), until a 2xx answers; retried with backoff for three days. " +
            `A 410 answer disables the webhook, as three days without a 2xx do (the admins get a mail). ${STEP_UP}`,
        tags: ["webhooks"],
        auth: true,
        ok: { 201: WITH_SECRET },
        errors: [409],
        codes: { 409: ["webhook_limit_reached"] },
      }),
      },
    )
    .get("/:id", ({ auth, params }) => ctx.webhooks.get(auth, params.id), {
      params: Id,
      transform: admins,
      ...doc({ summary: "One webhook (admins)", tags: ["webhooks"], auth: true, ok: { 200: READ }, errors: [404] }),
    })
    .patch("/:id", ({ auth, params, body }) => ctx.webhooks.patch(auth, params.id, body), {
      params: Id,
      body: WebhookPatch,
      transform: admins,
      ...doc({ summary: "Change a webhook: address, events, description, enabled (admins)", description: STEP_UP, tags: ["webhooks"], auth: true, ok: { 200: READ }, errors: [404] }),
    })
    .delete(
      "/:id",
      async ({ auth, params, set }) => {
        await ctx.webhooks.remove(auth, params.id);
        set.status = 204;
      },
      {
        params: Id,
        transform: admins,
        ...doc({ summary: "Delete a webhook and its delivery log (admins)", description: STEP_UP, tags: ["webhooks"], auth: true, ok: { 204: null }, errors: [404] }),
      },
    )
    .post("/:id/rotate-secret", ({ auth, params }) => ctx.webhooks.rotate(auth, params.id), {
      params: Id,
      transform: admins,
      ...doc({
        summary: "Give a webhook a new signing secret (admins); the previous one keeps signing beside it for 24 hours",
        description: `Deliveries carry two \`v1,\` signatures (space-separated) until the previous secret expires, so the receiver can switch at its pace. ${STEP_UP}`,
        tags: ["webhooks"],
        auth: true,
        ok: { 200: WITH_SECRET },
        errors: [404],
      }),
    })
    .post(
      "/:id/test",
      async ({ auth, params, set }) => {
        const sent = await ctx.webhooks.sendTest(auth, params.id);
        set.status = 202;
        return sent;
      },
      {
        params: Id,
        transform: admins,
        ...doc({
          summary: "Send a `webhook.test` event to a webhook now (admins)",
          description: "The answer is the delivery, pending; its outcome shows in the delivery log.",
          tags: ["webhooks"],
          auth: true,
          ok: { 202: DELIVERY },
          errors: [404, 409],
          codes: DISABLED,
        }),
      },
    )
    .get(
      "/:id/deliveries",
      async ({ auth, params, query }) => {
        const q = new QueryReader(query as RawQuery);
        const paging = q.paging();
        q.done();
        return ctx.webhooks.deliveries(auth, params.id, paging);
      },
      {
        params: Id,
        transform: admins,
        ...doc({
          summary: "A webhook's deliveries, newest first (admins): status, attempts, the last answer and the next attempt",
          tags: ["webhooks"],
          auth: true,
          ok: { 200: ["WebhookDeliveryPage", pageSchema(DeliveryRead)] },
          errors: [404],
          parameters: listParameters([]),
        }),
      },
    )
    .post(
      "/:id/deliveries/:delivery_id/retry",
      async ({ auth, params, set }) => {
        const queued = await ctx.webhooks.retry(auth, params.id, params.delivery_id);
        set.status = 202;
        return queued;
      },
      {
        params: DeliveryId,
        transform: admins,
        ...doc({
          summary: "Send a delivery again now, also one already delivered (admins)",
          description: "Its retries start a new three-day window.",
          tags: ["webhooks"],
          auth: true,
          ok: { 202: DELIVERY },
          errors: [404, 409],
          codes: DISABLED,
        }),
      },
    );
