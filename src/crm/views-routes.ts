import { Elysia, t } from "elysia";
import type { Context } from "../context";
import { authGuard } from "../http/auth-guard";
import { RequestValidationError } from "../kernel/errors";
import { createOnce } from "../idempotency/create-once";
import { doc } from "../http/openapi";
import { readDealQuery } from "./routes";
import { ViewCreate, ViewList, ViewPatch, ViewRead, type ViewQuery } from "./views-model";

/**
 * A view's query goes through the deal list's own reader, as the list would read it from the URL,
 * so a saved view holds nothing the list refuses (e.g. assigned_to with mine); its 422 items name
 * the body's field instead of the URL's parameter.
 */
export function checkViewQuery(query: ViewQuery | undefined): void {
  if (!query) return;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const v of Array.isArray(value) ? value : [value]) params.append(name, String(v));
  }
  try {
    readDealQuery(`http://view/?${params}`);
  } catch (e) {
    if (!(e instanceof RequestValidationError)) throw e;
    throw new RequestValidationError(e.items.map((i) => ({ ...i, loc: ["body", "query", ...i.loc.slice(1)] })));
  }
}

const view = (summary: string, ok: Parameters<typeof doc>[0]["ok"], errors: number[] = [], idempotent = false) =>
  doc({ summary, tags: ["crm"], auth: true, ok, errors: [...errors, 403], codes: { 403: ["shared_view_admin_only"], ...(idempotent ? { 409: ["view_limit_reached"] } : {}) }, idempotent });
const READ = ["DealViewRead", ViewRead] as const;

const Id = t.Object({ id: t.String() });

/** Saved views of the deal list: /api/v1/crm/views. */
export const viewRoutes = (ctx: Context) =>
  new Elysia({ name: "crm-view-routes", prefix: "/api/v1/crm/views", seed: ctx.id })
    .use(authGuard(ctx, { module: "crm" }))
    .get("", ({ auth }) => ctx.views.list(auth), view("The caller's personal views of the deal list and the organization's shared ones, by name", { 200: ["DealViewList", ViewList] }))
    .post(
      "",
      async ({ auth, body, set, request }) => {
        checkViewQuery(body.query);
        set.status = 201;
        return createOnce(ctx.idempotency, { auth, body, set, request }, () => ctx.views.create(auth, body), (id) => ctx.views.get(auth, id));
      },
      { body: ViewCreate, ...view("Save a view of the deal list: personal, or shared with every member (admins)", { 201: READ }, [409], true) },
    )
    .patch(
      "/:id",
      ({ auth, params, body }) => {
        checkViewQuery(body.query);
        return ctx.views.patch(auth, params.id, body);
      },
      { params: Id, body: ViewPatch, ...view("Change a view (a shared one: admins), or make it the caller's default (is_default)", { 200: READ }, [404]) },
    )
    .delete(
      "/:id",
      async ({ auth, params, set }) => {
        await ctx.views.remove(auth, params.id);
        set.status = 204;
      },
      { params: Id, ...view("Delete a view (a shared one: admins); it stops being anyone's default", { 204: null }, [404]) },
    );
