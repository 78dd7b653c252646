/**
 * The deal list's whole state lives in the URL's query string, under the API's own parameter
 * names (page, size, search, stage…, assigned_to | unassigned | mine, sort_by, sort_dir),
 * so a link, a reload or the back button gives the same view. Defaults are left out of the URL.
 */
import type { DealQuery, DealSort } from "../api/client";

/** Every order the deal list takes (a URL's sort_by outside it falls back to the default). */
const DEAL_SORTS = ["title", "value", "stage", "probability", "close_date", "created_at", "updated_at", "account_name", "contact_name", "assignee_name"] as const satisfies readonly DealSort[];
// Compiles only while the list names every sort_by the API takes.
type Holds<T extends true> = T;
export type EverySortListed = Holds<[Exclude<DealSort, (typeof DEAL_SORTS)[number]>] extends [never] ? true : false>;

export type Assignee = { kind: "anyone" } | { kind: "mine" } | { kind: "unassigned" } | { kind: "user"; id: string };

/** How the deals are shown: the paged table, or the board (a column per stage). */
export type DealMode = "table" | "board";

export interface DealView {
  /** In the URL as view=board; the table is the default. */
  mode: DealMode;
  search: string;
  stages: string[];
  assignee: Assignee;
  /** null: the server's default order, newest first (created_at desc). */
  sortBy: DealSort | null;
  sortDir: "asc" | "desc";
  page: number;
  size: number;
}

export const DEFAULT_SIZE = 20;
export const PAGE_SIZES = [10, 20, 50, 100];
const TRUE = /^(1|true|yes|on)$/i;

const intIn = (raw: string | null, fallback: number, min: number, max: number): number => {
  const n = raw === null ? NaN : Number(raw);
  return Number.isInteger(n) && n >= min && n <= max ? n : fallback;
};

/** A URL's query → the view; anything unreadable falls back to its default (never a 422 page). */
export function parseView(q: URLSearchParams): DealView {
  const sort = q.get("sort_by");
  const sortBy = sort && (DEAL_SORTS as readonly string[]).includes(sort) ? (sort as DealSort) : null;
  const dir = q.get("sort_dir");
  const assignedTo = q.get("assigned_to");
  const assignee: Assignee = assignedTo
    ? { kind: "user", id: assignedTo }
    : TRUE.test(q.get("mine") ?? "")
      ? { kind: "mine" }
      : TRUE.test(q.get("unassigned") ?? "")
        ? { kind: "unassigned" }
        : { kind: "anyone" };
  return {
    mode: q.get("view") === "board" ? "board" : "table",
    search: (q.get("search") ?? "").slice(0, 200),
    stages: [...new Set(q.getAll("stage").filter(Boolean))],
    assignee,
    sortBy,
    sortDir: dir === "asc" || dir === "desc" ? dir : sortBy ? "asc" : "desc",
    page: intIn(q.get("page"), 1, 1, 1_000_000_000),
    size: intIn(q.get("size"), DEFAULT_SIZE, 1, 100),
  };
}

/** The view → URL parameters (defaults omitted; null removes a parameter). */
export function viewParams(v: DealView): Record<string, string | string[] | null> {
  return {
    view: v.mode === "board" ? "board" : null,
    search: v.search || null,
    stage: v.stages,
    assigned_to: v.assignee.kind === "user" ? v.assignee.id : null,
    mine: v.assignee.kind === "mine" ? "1" : null,
    unassigned: v.assignee.kind === "unassigned" ? "1" : null,
    sort_by: v.sortBy,
    sort_dir: v.sortBy ? v.sortDir : null,
    page: v.page > 1 ? String(v.page) : null,
    size: v.size !== DEFAULT_SIZE ? String(v.size) : null,
  };
}

/** The view as a query string ("" or "?…"), in a stable order. */
export function viewSearch(v: DealView): string {
  const q = new URLSearchParams();
  for (const [k, val] of Object.entries(viewParams(v))) {
    if (Array.isArray(val)) for (const x of val) q.append(k, x);
    else if (val !== null) q.set(k, val);
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** The view's filters and search alone, as GET /crm/deals and GET /crm/deals/summary take them (the board's columns and counts). */
export function filterQuery(v: DealView): Omit<DealQuery, "page" | "size" | "sort_by" | "sort_dir"> {
  const { page: _p, size: _s, sort_by: _b, sort_dir: _d, ...rest } = viewQuery({ ...v, sortBy: null });
  return rest;
}

/** The view → GET /crm/deals parameters. */
export function viewQuery(v: DealView): DealQuery {
  const q: DealQuery = { page: v.page, size: v.size };
  const search = v.search.trim();
  if (search) q.search = search;
  if (v.stages.length) q.stage = v.stages;
  if (v.assignee.kind === "user") q.assigned_to = v.assignee.id;
  if (v.assignee.kind === "mine") q.mine = "true";
  if (v.assignee.kind === "unassigned") q.unassigned = "true";
  if (v.sortBy) {
    q.sort_by = v.sortBy;
    q.sort_dir = v.sortDir;
  }
  return q;
}

/** The order actually shown: the server's default is created_at, newest first. */
export const effectiveSort = (v: DealView): { by: DealSort; dir: "asc" | "desc" } => ({ by: v.sortBy ?? "created_at", dir: v.sortBy ? v.sortDir : "desc" });

/** A click on a column header: the same column flips direction, another starts ascending. */
export function sortedBy(v: DealView, col: DealSort): DealView {
  const cur = effectiveSort(v);
  const dir = cur.by === col ? (cur.dir === "asc" ? "desc" : "asc") : "asc";
  return { ...v, sortBy: col, sortDir: dir, page: 1 };
}
