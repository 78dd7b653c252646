/** The deal list itself: a real <table>, ten sortable headers, the stage changed in place. */
import { useEffect, useRef } from "preact/hooks";
import type { Deal, DealSort, Stage } from "../api/client";
import { formatDate, formatDateTime, money } from "../shared/format";
import { Link } from "../shared/router";

const short = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", year: "numeric" });
/** A moment as its day in the viewer's time zone; the full time is in the cell's title. */
const shortDate = (iso: string) => short.format(new Date(iso));

export interface Column {
  key: DealSort;
  label: string;
  num?: boolean;
  narrow?: boolean;
}

export const COLUMNS: Column[] = [
  { key: "title", label: "Title" },
  { key: "account_name", label: "Account" },
  { key: "value", label: "Value", num: true },
  { key: "stage", label: "Stage" },
  { key: "probability", label: "Probability", num: true },
  { key: "close_date", label: "Close date" },
  { key: "assignee_name", label: "Assignee" },
  { key: "contact_name", label: "Contact" },
  { key: "created_at", label: "Created" },
  { key: "updated_at", label: "Updated" },
];

export interface DealTableProps {
  deals: Deal[];
  stages: Stage[];
  sort: { by: DealSort; dir: "asc" | "desc" };
  loading: boolean;
  /** Deals whose stage change is on its way. */
  saving: Set<string>;
  onSort: (col: DealSort) => void;
  onStage: (d: Deal, key: string) => void;
  onEdit: (d: Deal) => void;
  onDelete: (d: Deal) => void;
  /** A row's mark when another person just changed or deleted it (shared/live-events.ts). */
  rowClass?: (id: string) => string;
  /** Rows ticked for a bulk change (./bulk-bar.tsx); every row is when all matching are chosen. */
  selected?: Set<string>;
  allSelected?: boolean;
  onSelect?: (ids: string[], on: boolean) => void;
}

/** The header's box: ticked when every row of the page is, mixed when some are. */
function SelectAllTh({ deals, selected, all, onSelect }: { deals: Deal[]; selected: Set<string>; all: boolean; onSelect: (ids: string[], on: boolean) => void }) {
  const ref = useRef<HTMLInputElement>(null);
  const n = all ? deals.length : deals.filter((d) => selected.has(d.id)).length;
  const every = deals.length > 0 && n === deals.length;
  useEffect(() => {
    if (ref.current) ref.current.indeterminate = n > 0 && !every;
  }, [n, every]);
  return (
    <th scope="col" class="select">
      <input ref={ref} type="checkbox" aria-label="Select every deal on this page" checked={every} onChange={() => onSelect(deals.map((d) => d.id), !every)} />
    </th>
  );
}

function SortTh({ col, sort, onSort }: { col: Column; sort: DealTableProps["sort"]; onSort: (c: DealSort) => void }) {
  const active = sort.by === col.key;
  const dir = active ? sort.dir : null;
  return (
    <th scope="col" class={col.num ? "num" : undefined} aria-sort={dir === "asc" ? "ascending" : dir === "desc" ? "descending" : "none"}>
      <button type="button" class="sort" onClick={() => onSort(col.key)}>
        {col.label}
        <span class="arrow" aria-hidden="true">
          {dir === "asc" ? "▲" : dir === "desc" ? "▼" : "↕"}
        </span>
      </button>
    </th>
  );
}

function StageCell({ deal, stages, saving, onStage }: { deal: Deal; stages: Stage[]; saving: boolean; onStage: (d: Deal, key: string) => void }) {
  const known = stages.some((s) => s.key === deal.stage);
  return (
    <td class="stage-cell">
      <span class="dot" style={{ background: deal.pipeline_stage_color ?? "#94a3b8" }} aria-hidden="true" />
      <select
        aria-label={`Stage of ${deal.title}`}
        value={deal.stage}
        disabled={saving}
        onChange={(e) => onStage(deal, (e.target as HTMLSelectElement).value)}
      >
        {!known && <option value={deal.stage}>{deal.pipeline_stage_name ?? deal.stage}</option>}
        {stages.map((s) => (
          <option key={s.key} value={s.key}>
            {s.name}
          </option>
        ))}
      </select>
    </td>
  );
}

export function DealTable({ deals, stages, sort, loading, saving, onSort, onStage, onEdit, onDelete, rowClass, selected, allSelected = false, onSelect }: DealTableProps) {
  return (
    <div class="table-wrap">
      <table class="deals">
        <caption class="visually-hidden">Deals{loading ? " (updating)" : ""}</caption>
        <thead>
          <tr>
            {onSelect && selected ? <SelectAllTh deals={deals} selected={selected} all={allSelected} onSelect={onSelect} /> : null}
            {COLUMNS.map((c) => (
              <SortTh key={c.key} col={c} sort={sort} onSort={onSort} />
            ))}
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody class={loading ? "dim" : undefined} aria-busy={loading ? "true" : "false"}>
          {deals.map((d) => (
            <tr key={d.id} class={[rowClass?.(d.id), (allSelected || selected?.has(d.id)) && "selected"].filter(Boolean).join(" ") || undefined}>
              {onSelect && selected ? (
                <td class="select">
                  <input type="checkbox" aria-label={`Select ${d.title}`} checked={allSelected || selected.has(d.id)} disabled={allSelected} onChange={(e) => onSelect([d.id], (e.target as HTMLInputElement).checked)} />
                </td>
              ) : null}
              <td class="title">
                {/* The title opens the deal's page (fields edited in place, the timeline); Edit keeps the quick form. */}
                <Link class="link" href={`/deals/${encodeURIComponent(d.id)}`}>
                  {d.title}
                </Link>
              </td>
              <td class="wrap">{d.account_name ?? "—"}</td>
              <td class="num">{money(d.value, d.currency)}</td>
              <StageCell deal={d} stages={stages} saving={saving.has(d.id)} onStage={onStage} />
              <td class="num">{d.probability === null ? "—" : `${d.probability}%`}</td>
              <td>{formatDate(d.close_date)}</td>
              <td class="wrap">{d.assignee_name ?? d.assignee_email ?? <span class="muted">Unassigned</span>}</td>
              <td class="wrap">{d.contact_name ?? "—"}</td>
              <td class="nowrap">
                <time dateTime={d.created_at} title={formatDateTime(d.created_at)}>
                  {shortDate(d.created_at)}
                </time>
              </td>
              <td class="nowrap">
                <time dateTime={d.updated_at} title={formatDateTime(d.updated_at)}>
                  {shortDate(d.updated_at)}
                </time>
              </td>
              <td class="actions-cell">
                <button type="button" class="small" onClick={() => onEdit(d)}>
                  Edit<span class="visually-hidden"> {d.title}</span>
                </button>{" "}
                <button type="button" class="small" onClick={() => onDelete(d)}>
                  Delete<span class="visually-hidden"> {d.title}</span>
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
