import { Elysia, t } from "elysia";
import type { Context } from "../context";
import { authGuard } from "../http/auth-guard";
import { requireAdmin } from "../kernel/principal";
import { requestInfo } from "../http/client";
import { QueryReader, rawQuery } from "../kernel/paging";
import type { AssigneeFilter } from "./deals-service";
import { NoteWrite, AccountCreate, AccountPatch, ContactCreate, ContactPatch, DealCreate, DealPatch, SORT_DIRS, SORT_FIELDS, SUMMARY_GROUPS, StageCreate, StagePatch, StageReorder } from "./model";
import { decimalText } from "./money";
import { createOnce } from "../idempotency/create-once";
import { CRM_DOCS as D } from "./docs";

/**
 * The deal list's filters and search (docs/interface.md#the-deal-list), read into `q`: the list and
 * the board's summary share them. `afterSearch` reads the list's own parameters in between, so the
 * 422 items keep the documented order (search, sort, then the filters).
 */
function readDealFilters(q: QueryReader, afterSearch: () => void = () => {}) {
  const search = q.search("search");
  afterSearch();
  const stageValues = q.all("stage");
  const assignedTo = q.value("assigned_to") || null;
  const unassigned = q.bool("unassigned");
  const mine = q.bool("mine");
  const given = [assignedTo !== null && "assigned_to", unassigned && "unassigned", mine && "mine"].filter(Boolean) as string[];
  if (given.length > 1) {
    q.items.push({
      loc: ["query", given[1]!],
      msg: `Value error, ${given.join(", ")} cannot be combined: give at most one of assigned_to, unassigned and mine`,
      type: "value_error",
    });
  }
  const filter: AssigneeFilter = { assigned_to: assignedTo, unassigned, mine };
  return { search, stages: stageValues.length > 0 ? stageValues : null, ...filter };
}

/** The deal list's parameters (docs/interface.md#the-deal-list); every failing one gets its own 422 item. */
export function readDealQuery(url: string) {
  const q = new QueryReader(rawQuery(url));
  const paging = q.paging();
  let sortBy: (typeof SORT_FIELDS)[number] | null = null;
  let sortDir: (typeof SORT_DIRS)[number] | null = null;
  const filters = readDealFilters(q, () => {
    sortBy = q.literal("sort_by", SORT_FIELDS);
    sortDir = q.literal("sort_dir", SORT_DIRS);
  });
  // The list only (an account's or a contact's page lists its deals); an id the tenant lacks matches nothing.
  const account = q.value("account_id") || null;
  const contact = q.value("contact_id") || null;
  q.done();
  return {
    ...paging,
    ...filters,
    account,
    contact,
    sortBy: sortBy ?? "created_at",
    sortDir: sortDir ?? (sortBy ? "asc" : "desc"),
  } as const;
}

/** The deal board's summary: the list's filters and search, and what to group by (stage unless told). */
export function readDealSummaryQuery(url: string) {
  const q = new QueryReader(rawQuery(url));
  const filters = readDealFilters(q);
  const groupBy = q.literal("group_by", SUMMARY_GROUPS);
  q.done();
  return { ...filters, groupBy: groupBy ?? "stage" } as const;
}

export function readListQuery(url: string) {
  const q = new QueryReader(rawQuery(url));
  const paging = q.paging();
  const search = q.search("search");
  q.done();
  return { ...paging, search };
}

/** The contact list's: paging, search, and `account_id` (an account's page lists its contacts; an id the organization lacks matches nothing). */
export function readContactListQuery(url: string) {
  const q = new QueryReader(rawQuery(url));
  const paging = q.paging();
  const search = q.search("search");
  const accountId = q.value("account_id") || null;
  q.done();
  return { ...paging, search, accountId };
}

/** A page of a list without filters (a deal's, an account's or a contact's timeline). */
export function readPageQuery(url: string) {
  const q = new QueryReader(rawQuery(url));
  const paging = q.paging();
  q.done();
  return paging;
}

/** A JSON number for `value` is read as the decimal text it was written as (see money.ts). */
/**
 * Integer fields sent as text ("50", "-1.00") become numbers before validation, as Pydantic's lax
 * mode reads them: left to Elysia's own coercion, a bound failed inside it and the 422 item lost
 * its `loc` (["property"] instead of ["body","probability"]; found by the bad-input fuzz).
 */
const integersAsNumbers = (body: unknown, fields: string[]) => {
  if (!body || typeof body !== "object") return;
  const b = body as Record<string, unknown>;
  for (const f of fields) {
    const v = b[f];
    if (typeof v !== "string" || !/^\s*[+-]?\d+(\.0*)?\s*$/.test(v)) continue;
    const n = Number(v);
    if (Number.isSafeInteger(n)) b[f] = n;
  }
};

const valueAsText = ({ body }: { body: unknown }) => {
  if (body && typeof body === "object" && "value" in body) (body as Record<string, unknown>).value = decimalText((body as Record<string, unknown>).value);
  integersAsNumbers(body, ["probability"]);
};
const stageNumbers = ({ body }: { body: unknown }) => integersAsNumbers(body, ["position", "probability"]);

// Admins only, checked before the body is validated: a member learns 403, not the body's shape.
const adminFirst = ({ auth }: { auth: Parameters<typeof requireAdmin>[0] }) => requireAdmin(auth);

const Id = t.Object({ id: t.String() });

/** The CRM: /api/v1/crm (docs/interface.md#the-deal-list, #crm-records). */
export const crmRoutes = (ctx: Context) =>
  new Elysia({ name: "crm-routes", prefix: "/api/v1/crm", seed: ctx.id })
    // Signed in, and the organization has the CRM (403 otherwise), before the body is validated.
    .use(authGuard(ctx, { module: "crm" }))
    .get("/pipeline-stages", ({ auth }) => ctx.pipeline.list(auth), D.listStages)
    .post(
      "/pipeline-stages",
      async ({ auth, body, set, request }) => {
        set.status = 201;
        return createOnce(ctx.idempotency, { auth, body, set, request }, () => ctx.pipeline.create(auth, body), (id) => ctx.pipeline.get(auth, id));
      },
      { body: StageCreate, transform: stageNumbers, ...D.createStage },
    )
    .post("/pipeline-stages/reorder", ({ auth, body, request, server }) => ctx.pipeline.reorder(auth, body.ids, requestInfo(request, server, ctx.config.trustProxy)), {
      body: StageReorder,
      transform: adminFirst,
      ...D.reorderStages,
    })
    .patch(
      "/pipeline-stages/:id",
      ({ auth, params, body, request, server }) => ctx.pipeline.patch(auth, params.id, body, requestInfo(request, server, ctx.config.trustProxy)),
      { params: Id, body: StagePatch, transform: [adminFirst, stageNumbers], ...D.patchStage },
    )
    .delete(
      "/pipeline-stages/:id",
      async ({ auth, params, request, server, set }) => {
        const q = new QueryReader(rawQuery(request.url));
        const moveTo = q.value("move_to") || null;
        q.done();
        await ctx.pipeline.remove(auth, params.id, moveTo, requestInfo(request, server, ctx.config.trustProxy));
        set.status = 204;
      },
      { params: Id, transform: adminFirst, ...D.deleteStage },
    )
    .get("/deals", ({ auth, request }) => ctx.deals.list(auth, readDealQuery(request.url)), D.listDeals)
    .get("/deals/summary", ({ auth, request }) => ctx.deals.summary(auth, readDealSummaryQuery(request.url)), D.dealSummary)
    .post(
      "/deals",
      async ({ auth, body, set, request }) => {
        set.status = 201;
        return createOnce(ctx.idempotency, { auth, body, set, request }, () => ctx.deals.create(auth, body), (id) => ctx.deals.read(auth, id));
      },
      { body: DealCreate, transform: valueAsText, ...D.createDeal },
    )
    .get("/deals/:id", ({ auth, params }) => ctx.deals.read(auth, params.id), { params: Id, ...D.getDeal })
    .patch("/deals/:id", ({ auth, params, body }) => ctx.deals.patch(auth, params.id, body), { params: Id, body: DealPatch, transform: valueAsText, ...D.patchDeal })
    .delete(
      "/deals/:id",
      async ({ auth, params, set }) => {
        await ctx.deals.remove(auth, params.id);
        set.status = 204;
      },
      { params: Id, ...D.deleteDeal },
    )
    .get("/deals/:id/activities", ({ auth, params, request }) => ctx.activities.timeline(auth, params.id, readPageQuery(request.url)), { params: Id, ...D.dealActivities })
    .post(
      "/deals/:id/notes",
      async ({ auth, params, body, set, request }) => {
        set.status = 201;
        return createOnce(ctx.idempotency, { auth, body, set, request }, () => ctx.activities.createNote(auth, params.id, body), (id) => ctx.activities.getNote(auth, id));
      },
      { params: Id, body: NoteWrite, ...D.createNote },
    )
    .patch("/notes/:id", ({ auth, params, body }) => ctx.activities.patchNote(auth, params.id, body), { params: Id, body: NoteWrite, ...D.patchNote })
    .delete(
      "/notes/:id",
      async ({ auth, params, set }) => {
        await ctx.activities.deleteNote(auth, params.id);
        set.status = 204;
      },
      { params: Id, ...D.deleteNote },
    )
    .get("/accounts", ({ auth, request }) => ctx.crm.listAccounts(auth, readListQuery(request.url)), D.listAccounts)
    .post(
      "/accounts",
      async ({ auth, body, set, request }) => {
        set.status = 201;
        return createOnce(ctx.idempotency, { auth, body, set, request }, () => ctx.crm.createAccount(auth, body), (id) => ctx.crm.getAccount(auth, id));
      },
      { body: AccountCreate, ...D.createAccount },
    )
    .get("/accounts/:id", ({ auth, params }) => ctx.crm.getAccount(auth, params.id), { params: Id, ...D.getAccount })
    .get("/accounts/:id/activities", ({ auth, params, request }) => ctx.activities.recordTimeline(auth, "account", params.id, readPageQuery(request.url)), {
      params: Id,
      ...D.accountActivities,
    })
    .patch("/accounts/:id", ({ auth, params, body }) => ctx.crm.patchAccount(auth, params.id, body), { params: Id, body: AccountPatch, ...D.patchAccount })
    .delete(
      "/accounts/:id",
      async ({ auth, params, set }) => {
        await ctx.crm.deleteAccount(auth, params.id);
        set.status = 204;
      },
      { params: Id, ...D.deleteAccount },
    )
    .get("/contacts", ({ auth, request }) => ctx.crm.listContacts(auth, readContactListQuery(request.url)), D.listContacts)
    .post(
      "/contacts",
      async ({ auth, body, set, request }) => {
        set.status = 201;
        return createOnce(ctx.idempotency, { auth, body, set, request }, () => ctx.crm.createContact(auth, body), (id) => ctx.crm.getContact(auth, id));
      },
      { body: ContactCreate, ...D.createContact },
    )
    .get("/contacts/:id", ({ auth, params }) => ctx.crm.getContact(auth, params.id), { params: Id, ...D.getContact })
    .get("/contacts/:id/activities", ({ auth, params, request }) => ctx.activities.recordTimeline(auth, "contact", params.id, readPageQuery(request.url)), {
      params: Id,
      ...D.contactActivities,
    })
    .patch("/contacts/:id", ({ auth, params, body }) => ctx.crm.patchContact(auth, params.id, body), { params: Id, body: ContactPatch, ...D.patchContact })
    .delete(
      "/contacts/:id",
      async ({ auth, params, set }) => {
        await ctx.crm.deleteContact(auth, params.id);
        set.status = 204;
      },
      { params: Id, ...D.deleteContact },
    );
