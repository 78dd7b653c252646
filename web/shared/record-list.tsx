/**
 * The searchable, paged table of the accounts and contacts screens: their states (loading, an
 * error with a retry, nothing yet with a first-create button, nothing matching with a way to
 * clear the search), the table that dims while the next page loads, and the pager; and the quiet
 * reload when another person changes a record of its kind (the row marked, the rows not dimmed).
 * Each screen keeps its own columns, forms and dialogs. On a phone each row is a card (crm.css,
 * `table.records`): the first column as its heading, the others labelled from `data-label`, the
 * actions on a line of their own, where a table wider than the screen hid them past its edge.
 */
import type { ComponentChildren } from "preact";
import type { SearchList } from "./url-search";
import { Pager } from "./pager";
import { Empty, ErrorBox, Loading } from "./states";
import { useSession } from "./session";
import { useQuietReload } from "./live-events";

/** A column: its header, its cell, and the cell's classes ("title" for the first, "hide-narrow", "nowrap"). */
export interface RecordColumn<T> {
  label: string;
  class?: string;
  cell: (item: T) => ComponentChildren;
}

export interface RecordListProps<T extends { id: string }> {
  s: SearchList<T>;
  /** The record's noun, singular and plural ("account", "accounts"). */
  noun: [one: string, many: string];
  /** What the kind is, said when there is none yet. */
  emptyText: string;
  onCreate: () => void;
  /** Beside the "New …" button in the screen's head (export and import). */
  tools: ComponentChildren;
  /** What the search box searches, said in its placeholder ("Name", "Name or email"). */
  searchPlaceholder: string;
  columns: RecordColumn<T>[];
  /** The row's buttons and links (the last cell, its header hidden). */
  actions: (item: T) => ComponentChildren;
}

/** The screen's head (title, tools, New …), its search box and the list; the screen adds its dialogs. */
export function RecordList<T extends { id: string }>({ s, noun: [one, many], emptyText, onCreate, tools, searchPlaceholder, columns, actions }: RecordListProps<T>) {
  const { list, view } = s;
  // Another person's change: a quiet reload, the record's row marked.
  const { marks, quiet } = useQuietReload(one, [`${one}.`], useSession().me?.user.id, list);
  const data = list.data;
  const search = view.search.trim();
  const title = many.charAt(0).toUpperCase() + many.slice(1);
  return (
    <>
      <div class="screen-head">
        <h1 id={`${many}-title`}>{title}</h1>
        {tools}
        <button type="button" class="primary" onClick={onCreate}>
          New {one}
        </button>
      </div>
      <div class="toolbar">
        <div class="field search">
          <label for={`${one}-search`}>Search {many}</label>
          <input id={`${one}-search`} type="search" value={s.text} placeholder={searchPlaceholder} maxLength={200} autocomplete="off" onInput={(e) => s.onText((e.target as HTMLInputElement).value)} />
        </div>
      </div>
      {list.error && data ? <ErrorBox error={list.error} retry={list.reload} /> : null}
      {!data ? (
        list.error ? <ErrorBox error={list.error} retry={list.reload} /> : <Loading label={`Loading ${many}…`} />
      ) : data.total === 0 ? (
        search ? (
          <Empty>
            <p role="status">
              No {one} matches “{search}”.
            </p>
            <button type="button" onClick={s.clear}>
              Clear search
            </button>
          </Empty>
        ) : (
          <Empty>
            <p>{emptyText}</p>
            <button type="button" class="primary" onClick={onCreate}>
              Create your first {one}
            </button>
          </Empty>
        )
      ) : (
        <>
          <div class="table-wrap">
            <table class="records">
              <caption class="visually-hidden">{title}</caption>
              <thead>
                <tr>
                  {columns.map((c) => (
                    <th key={c.label} scope="col" class={c.class?.includes("hide-narrow") ? "hide-narrow" : undefined}>
                      {c.label}
                    </th>
                  ))}
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody class={list.loading && !quiet ? "dim" : undefined} aria-busy={list.loading ? "true" : "false"}>
                {data.items.map((item) => (
                  <tr key={item.id} class={marks.classOf(item.id) || undefined}>
                    {columns.map((c) => (
                      <td key={c.label} class={c.class} data-label={c.label}>
                        {c.cell(item)}
                      </td>
                    ))}
                    <td class="actions-cell nowrap">{actions(item)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={view.page} pages={data.pages} total={data.total} size={view.size} noun={data.total === 1 ? one : many} onPage={s.setPage} onSize={s.setSize} />
        </>
      )}
    </>
  );
}
