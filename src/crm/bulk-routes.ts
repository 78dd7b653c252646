import { Elysia, t } from "elysia";
import type { Context } from "../context";
import { authGuard } from "../http/auth-guard";
import { requestInfo } from "../http/client";
import { doc } from "../http/openapi";
import { RequestValidationError } from "../kernel/errors";
import { JobRead } from "./export-import/jobs-model";
import { BulkRequest, MAX_BULK_IDS } from "./bulk-model";
import type { BulkChange } from "./bulk-repo";
import type { BulkFilterQuery, BulkOrder } from "./bulk-service";
import { readDealQuery } from "./routes";
import { ViewQuery } from "./views-model";

/**
 * A bulk request's filter goes through the deal list's own reader, as the list would read it
 * from the URL (as a saved view's query does), so the change chooses exactly the deals the list
 * shows; its 422 items name the body's field. Paging and order are read and ignored.
 */
function readFilter(filter: NonNullable<BulkRequest["filter"]>): BulkFilterQuery {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(filter)) {
    for (const v of Array.isArray(value) ? value : [value]) params.append(name, String(v));
  }
  try {
    const q = readDealQuery(`http://bulk/?${params}`);
    return { search: q.search, stages: q.stages, assigned_to: q.assigned_to, unassigned: q.unassigned, mine: q.mine };
  } catch (e) {
    if (!(e instanceof RequestValidationError)) throw e;
    throw new RequestValidationError(e.items.map((i) => ({ ...i, loc: ["body", "filter", ...i.loc.slice(1)] })));
  }
}

/** Exactly one of ids and filter, of set and delete; a set names something. */
export function readBulkOrder(body: BulkRequest): BulkOrder {
  const items: ConstructorParameters<typeof RequestValidationError>[0] = [];
  if ((body.ids === undefined) === (body.filter === undefined)) {
    items.push({ loc: ["body", "ids"], msg: "Value error, give either ids (the deals) or filter (the deal list's filters), not both or neither", type: "value_error" });
  }
  if ((body.set === undefined) === (body.delete === undefined)) {
    items.push({ loc: ["body", "set"], msg: "Value error, give either set (a stage or assignee) or delete, not both or neither", type: "value_error" });
  } else if (body.set && body.set.stage === undefined && body.set.assigned_to === undefined) {
    items.push({ loc: ["body", "set"], msg: "Value error, set names a stage, an assignee (assigned_to) or both", type: "value_error" });
  }
  if (items.length > 0) throw new RequestValidationError(items);
  const change: BulkChange = body.set ? { set: body.set } : { delete: true };
  return { ids: body.ids ?? null, filter: body.filter ? readFilter(body.filter) : null, change };
}

/**
 * Unknown fields are refused before validation, at every level: the app's normalizing would drop
 * them, and a misspelt filter field dropped would widen the change to every deal.
 */
function refuseUnknownFields({ body }: { body: unknown }): void {
  const items: ConstructorParameters<typeof RequestValidationError>[0] = [];
  const check = (value: unknown, allowed: readonly string[], loc: string[]) => {
    if (!value || typeof value !== "object" || Array.isArray(value)) return;
    for (const key of Object.keys(value)) if (!allowed.includes(key)) items.push({ loc: [...loc, key], msg: "Extra inputs are not permitted", type: "extra_forbidden" });
  };
  check(body, Object.keys(BulkRequest.properties), ["body"]);
  const b = body as Record<string, unknown> | null;
  if (b && typeof b === "object") {
    check(b.filter, Object.keys(ViewQuery.properties), ["body", "filter"]);
    check(b.set, ["stage", "assigned_to"], ["body", "set"]);
  }
  if (items.length > 0) throw new RequestValidationError(items);
}

const JOB = ["ImportJob", JobRead] as const;
const BULK_DOCS = {
  bulk: doc({
    summary: "Change the stage or assignee of many deals, or delete them, as a background job",
    description:
      `The deals: \`ids\` (at most ${MAX_BULK_IDS}) or \`filter\`, the deal list's parameters as an object (search, stage, assigned_to, unassigned, mine; ` +
      "paging and order are ignored), which chooses exactly the deals the list shows, counted when the job starts. The change: `set` " +
      "{stage?, assigned_to? (null: nobody)} or `delete: true`. Answers 202 with a job (kind deals_bulk; GET /api/v1/crm/jobs/{id} for its progress) " +
      "that writes the deals in short batches, each deal with its timeline entries and events as a single edit or delete, and lands whole or not " +
      "at all. Every member with the CRM may, as with single deals. One import or bulk change per organization at a time (429 too_many_jobs). " +
      "Its user can undo it for 10 minutes after it ends (POST /api/v1/crm/jobs/{id}/undo).",
    tags: ["crm"],
    auth: true,
    ok: { 202: JOB },
    errors: [429],
    codes: { 429: ["too_many_jobs"] },
  }),
  undo: doc({
    summary: "Undo a bulk change of deals: the caller's last, within 10 minutes of its end; the undo is a job too",
    description:
      "Answers 202 with the undo job (kind deals_bulk_undo). It puts back each deal's stage and assignee as they were before the change, " +
      "unless someone changed that value since, and brings deleted deals back with their timeline and notes (unless their account, contact " +
      "or assignee was removed since). 409 with a sentence when the change cannot be undone: bulk_change_running, nothing_to_undo (it failed), " +
      "already_undone, not_last_bulk_change (the caller made another since), undo_expired (over 10 minutes ago). 403 for anyone but its user.",
    tags: ["crm"],
    auth: true,
    ok: { 202: JOB },
    errors: [404, 409, 429],
    codes: { 403: ["forbidden"], 409: ["bulk_change_running", "nothing_to_undo", "already_undone", "not_last_bulk_change", "undo_expired"], 429: ["too_many_jobs"] },
  }),
};

/** Bulk changes of deals and their undo: POST /api/v1/crm/deals/bulk, POST /api/v1/crm/jobs/{id}/undo. */
export const bulkRoutes = (ctx: Context) =>
  new Elysia({ name: "crm-bulk-routes", prefix: "/api/v1/crm", seed: ctx.id })
    .use(authGuard(ctx, { module: "crm" }))
    .post(
      "/deals/bulk",
      async ({ auth, body, request, server, set }) => {
        const answer = await ctx.bulk.start(auth, readBulkOrder(body), requestInfo(request, server, ctx.config.trustProxy));
        set.status = 202;
        return answer;
      },
      { body: BulkRequest, transform: refuseUnknownFields, ...BULK_DOCS.bulk },
    )
    .post(
      "/jobs/:id/undo",
      async ({ auth, params, request, server, set }) => {
        const answer = await ctx.bulk.undo(auth, params.id, requestInfo(request, server, ctx.config.trustProxy));
        set.status = 202;
        return answer;
      },
      { params: t.Object({ id: t.String() }), ...BULK_DOCS.undo },
    );
