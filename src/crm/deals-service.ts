import type { Principal } from "../auth/service";
import { timeOrderedId } from "../kernel/ids";
import { userActor } from "../events/repo";
import { RequestValidationError, errors } from "../kernel/errors";
import { type Page, pageOf } from "../kernel/paging";
import type { DealFields, DealsStore, Missing, WriteResult } from "./deals-repo";
import type { DealSummaryQuery, DealsQuery } from "./deals-query";
import { type DealCreate, type DealListQuery, type DealPatch, type DealRead, type DealSummary, MAX_CUSTOM_DATA_BYTES } from "./model";
import { centsOf } from "./money";
import { summaryGroups } from "./deals-summary";
import type { CrmStore } from "./repo";
import { toDealRead } from "./read";
import { clean } from "./service";

export interface DealsDeps {
  now: () => number;
  repo: CrmStore;
  deals: DealsStore;
  query: DealsQuery;
}

/** What the list's assignee parameters ask for: a user id, "" for unassigned, or null for anyone. */
export interface AssigneeFilter {
  assigned_to: string | null;
  unassigned: boolean;
  mine: boolean;
}

const NOT_FOUND: Record<Exclude<Missing, "stage">, string> = {
  account_id: "Account not found.",
  contact_id: "Contact not found.",
  assigned_to: "Assignee not found.",
};

/** Deals: create, read, change, delete, and the deal list. */
export function createDealsService(d: DealsDeps) {
  /** A stage key the tenant does not have is a 422 naming the keys it does have. */
  async function badStage(tenantId: string, stage: string): Promise<RequestValidationError> {
    const keys = (await d.repo.stages(tenantId)).map((s) => `'${s.key}'`);
    const expected = keys.join(", ").replace(/, ([^,]*)$/, " or $1");
    return new RequestValidationError([{ loc: ["body", "stage"], msg: `Input should be ${expected}`, type: "literal_error", input: stage, ctx: { expected } }]);
  }

  async function settle(tenantId: string, r: WriteResult, stage: () => string): Promise<void> {
    if (r.ok) return;
    if ("notFound" in r) throw errors.notFound("Deal not found.");
    if (r.missing === "stage") throw await badStage(tenantId, stage());
    throw errors.notFound(NOT_FOUND[r.missing]);
  }

  function customData(v: unknown): string | null {
    if (v === undefined || v === null) return null;
    if (typeof v !== "object" || Array.isArray(v)) {
      throw new RequestValidationError([{ loc: ["body", "custom_data"], msg: "Input should be a valid dictionary", type: "dict_type" }]);
    }
    const text = JSON.stringify(v);
    if (Buffer.byteLength(text, "utf8") > MAX_CUSTOM_DATA_BYTES) {
      throw new RequestValidationError([
        { loc: ["body", "custom_data"], msg: `Value error, custom_data must be at most ${MAX_CUSTOM_DATA_BYTES} bytes of JSON`, type: "value_error" },
      ]);
    }
    return text;
  }

  async function read(tenantId: string, id: string): Promise<DealRead> {
    const row = await d.deals.byId(tenantId, id);
    if (!row) throw errors.notFound("Deal not found.");
    return toDealRead(row);
  }

  async function create(auth: Principal, body: DealCreate): Promise<DealRead> {
    const f: DealFields = {
      title: body.title.trim(),
      account_id: body.account_id,
      contact_id: body.contact_id ?? null,
      assigned_to: body.assigned_to ?? null,
      stage: body.stage ?? "new",
      value_cents: body.value === undefined ? 0 : centsOf(body.value)!,
      currency: body.currency ?? "USD",
      close_date: body.close_date ?? null,
      probability: body.probability ?? null,
      notes: clean(body.notes),
      custom_data: customData(body.custom_data),
    };
    // Omitted (not null): the stage's own probability, as the pipeline states it. An unknown
    // stage leaves it null; the insert then refuses the stage.
    if (body.probability === undefined) f.probability = (await d.repo.stages(auth.tenantId)).find((s) => s.key === f.stage)?.probability ?? null;
    const id = timeOrderedId(d.now());
    await settle(auth.tenantId, await d.deals.insert(auth.tenantId, id, f, d.now(), userActor(auth)), () => f.stage);
    return read(auth.tenantId, id);
  }

  async function patch(auth: Principal, id: string, body: DealPatch): Promise<DealRead> {
    const data = body.custom_data === undefined ? undefined : customData(body.custom_data);
    const r = await d.deals.update(
      auth.tenantId,
      id,
      (c) => ({
        title: body.title !== undefined ? body.title.trim() : c.title,
        account_id: body.account_id ?? c.account_id,
        contact_id: body.contact_id !== undefined ? body.contact_id : c.contact_id,
        assigned_to: body.assigned_to !== undefined ? body.assigned_to : c.assigned_to,
        stage: body.stage ?? c.stage,
        value_cents: body.value !== undefined ? centsOf(body.value)! : c.value_cents,
        currency: body.currency ?? c.currency,
        close_date: body.close_date !== undefined ? body.close_date : c.close_date,
        probability: body.probability !== undefined ? body.probability : c.probability,
        notes: body.notes !== undefined ? clean(body.notes) : c.notes,
        custom_data: data !== undefined ? data : c.custom_data,
      }),
      d.now(),
      userActor(auth),
    );
    await settle(auth.tenantId, r, () => body.stage ?? "");
    return read(auth.tenantId, id);
  }

  async function remove(auth: Principal, id: string): Promise<void> {
    if (!(await d.deals.remove(auth.tenantId, id, d.now(), userActor(auth)))) throw errors.notFound("Deal not found.");
  }

  /** The requested stages the tenant has (sorted, once each; others match nothing), and the assignee filter as the stores take it. */
  async function filtersOf(auth: Principal, q: { stages: string[] | null } & AssigneeFilter) {
    let stages: string[] | null = null;
    if (q.stages !== null) {
      const known = new Set((await d.repo.stages(auth.tenantId)).map((s) => s.key));
      stages = [...new Set(q.stages)].filter((s) => known.has(s)).sort();
    }
    return { stages, assignee: q.mine ? auth.userId : q.unassigned ? "" : q.assigned_to };
  }

  /** The deal list (docs/interface.md#the-deal-list). Stage keys the tenant lacks match nothing. */
  async function list(auth: Principal, q: Omit<DealListQuery, "assignee"> & AssigneeFilter): Promise<Page<DealRead>> {
    const { seqs, total, rows: read } = await d.query.list(auth.tenantId, { ...q, ...(await filtersOf(auth, q)) });
    const rows = read ? await d.deals.withStages(auth.tenantId, read) : await d.deals.bySeqs(auth.tenantId, seqs);
    return pageOf(rows.map(toDealRead), total, q.page, q.size);
  }

  /** The deal board's summary: the list's filters and search, counted and summed per group and currency. */
  async function summary(auth: Principal, q: Pick<DealSummaryQuery, "search" | "groupBy"> & { stages: string[] | null } & AssigneeFilter): Promise<DealSummary> {
    const filters = await filtersOf(auth, q);
    const [rows, stages] = await Promise.all([d.query.summary(auth.tenantId, { search: q.search, groupBy: q.groupBy, ...filters }), d.repo.stages(auth.tenantId)]);
    return summaryGroups(q.groupBy, rows, stages);
  }

  return { create, read: (auth: Principal, id: string) => read(auth.tenantId, id), patch, remove, list, summary };
}

export type DealsService = ReturnType<typeof createDealsService>;
