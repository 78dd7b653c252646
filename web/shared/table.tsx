/** A column header that sorts: a button whose aria-sort tells the current direction. */
import type { ComponentChildren } from "preact";

export interface SortHeaderProps {
  label: ComponentChildren;
  active: boolean;
  dir: "asc" | "desc";
  onSort: () => void;
}

export function SortHeader({ label, active, dir, onSort }: SortHeaderProps) {
  return (
    <th scope="col" aria-sort={active ? (dir === "asc" ? "ascending" : "descending") : "none"}>
      <button type="button" class="sort" onClick={onSort}>
        {label}
        <span aria-hidden="true" class="arrow">
          {active ? (dir === "asc" ? "▲" : "▼") : ""}
        </span>
      </button>
    </th>
  );
}

/** A colored dot and a label: pipeline stages. */
export const StageBadge = ({ name, color }: { name: string; color: string | null }) => (
  <span class="badge">
    <span class="dot" style={{ background: color ?? "#94a3b8" }} aria-hidden="true" />
    {name}
  </span>
);
