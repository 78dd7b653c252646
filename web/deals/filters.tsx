/** The deal list's toolbar: search as you type, stages (any of several), assignee. */
import type { Stage, User } from "../api/client";
import type { Assignee, DealView } from "./view";

export interface FiltersProps {
  view: DealView;
  text: string;
  onText: (t: string) => void;
  onSearchNow: () => void;
  stages: Stage[];
  /** Admins: the organization's people; members: null (they can't list users). */
  people: User[] | null;
  meId: string;
  onChange: (v: DealView) => void;
}

const assigneeValue = (a: Assignee) => (a.kind === "user" ? `user:${a.id}` : a.kind);
const assigneeOf = (v: string): Assignee => (v.startsWith("user:") ? { kind: "user", id: v.slice(5) } : { kind: v as "anyone" | "mine" | "unassigned" });

export function Filters({ view, text, onText, onSearchNow, stages, people, meId, onChange }: FiltersProps) {
  const toggleStage = (key: string) => {
    const next = view.stages.includes(key) ? view.stages.filter((s) => s !== key) : [...view.stages, key];
    onChange({ ...view, stages: next, page: 1 });
  };
  const current = view.assignee;
  const others = (people ?? []).filter((u) => u.id !== meId);
  const unknownPerson = current.kind === "user" && !others.some((u) => u.id === current.id);
  return (
    <div class="deal-filters">
      <div class="toolbar">
        <div class="field search">
          <label for="deal-search">Search deals</label>
          <input
            id="deal-search"
            type="search"
            value={text}
            placeholder="Title, notes, account or contact"
            maxLength={200}
            autocomplete="off"
            onInput={(e) => onText((e.target as HTMLInputElement).value)}
            onKeyDown={(e) => e.key === "Enter" && onSearchNow()}
          />
        </div>
        <div class="field assignee">
          <label for="deal-assignee">Assignee</label>
          <select id="deal-assignee" value={assigneeValue(current)} onChange={(e) => onChange({ ...view, assignee: assigneeOf((e.target as HTMLSelectElement).value), page: 1 })}>
            <option value="anyone">Anyone</option>
            <option value="mine">Assigned to me</option>
            <option value="unassigned">Unassigned</option>
            {others.length > 0 && (
              <optgroup label="People">
                {others.map((u) => (
                  <option key={u.id} value={`user:${u.id}`}>
                    {u.full_name || u.email}
                  </option>
                ))}
              </optgroup>
            )}
            {unknownPerson && <option value={`user:${current.id}`}>{current.id === meId ? "Assigned to me" : "A chosen person"}</option>}
          </select>
        </div>
      </div>
      <fieldset class="stage-filter">
        <legend>Stages {view.stages.length === 0 ? <span class="hint">(all)</span> : null}</legend>
        {stages.map((s) => {
          const on = view.stages.includes(s.key);
          return (
            <label key={s.key} class={`chip${on ? " on" : ""}`}>
              <input type="checkbox" checked={on} onChange={() => toggleStage(s.key)} />
              <span class="dot" style={{ background: s.color }} aria-hidden="true" />
              {s.name}
            </label>
          );
        })}
        {view.stages.length > 0 && (
          <button type="button" class="link" onClick={() => onChange({ ...view, stages: [], page: 1 })}>
            All stages
          </button>
        )}
      </fieldset>
    </div>
  );
}
