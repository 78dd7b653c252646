/**
 * A saved view (GET /crm/views) ↔ the deal list's URL-held state (./view.ts). A view keeps the
 * list's filters, search, order, page size and mode; it opens at its first page.
 */
import type { DealSort, SavedView, SavedViewQuery } from "../api/client";
import { DEFAULT_SIZE, type DealView, parseView } from "./view";

/** The current state → what POST /crm/views stores (defaults left out). */
export function savedQueryOf(v: DealView): SavedViewQuery {
  const q: SavedViewQuery = {};
  const search = v.search.trim();
  if (search) q.search = search;
  if (v.stages.length) q.stage = v.stages;
  if (v.assignee.kind === "user") q.assigned_to = v.assignee.id;
  if (v.assignee.kind === "mine") q.mine = true;
  if (v.assignee.kind === "unassigned") q.unassigned = true;
  if (v.sortBy) {
    q.sort_by = v.sortBy;
    q.sort_dir = v.sortDir;
  }
  if (v.size !== DEFAULT_SIZE) q.size = v.size;
  return q;
}

/** A saved view → the state to show, read as a URL would be (whatever is unreadable falls back). */
export function stateOf(saved: Pick<SavedView, "kind" | "query">): DealView {
  const p = new URLSearchParams();
  const q = saved.query;
  if (saved.kind === "board") p.set("view", "board");
  if (q.search) p.set("search", q.search);
  for (const s of q.stage ?? []) p.append("stage", s);
  if (q.assigned_to) p.set("assigned_to", q.assigned_to);
  if (q.mine) p.set("mine", "1");
  if (q.unassigned) p.set("unassigned", "1");
  if (q.sort_by) p.set("sort_by", q.sort_by as DealSort);
  if (q.sort_dir) p.set("sort_dir", q.sort_dir);
  if (q.size) p.set("size", String(q.size));
  return parseView(p);
}
