/**
 * The security log (admins): the organization's audit rows, newest first, filtered by person,
 * actions, and a time range, paged; the URL holds the view. "Download CSV" is a plain link to
 * the same rows as CSV: the server streams it, whatever its length.
 */
import "../deals/crm.css";
import "./security-log.css";
import { useEffect, useState } from "preact/hooks";
import { api, href, type User } from "../api/client";
import { formatDateTime, device } from "../shared/format";
import { useLive } from "../shared/live-list";
import { Pager } from "../shared/pager";
import { setQuery, useLocation } from "../shared/router";
import { Empty, ErrorBox, Loading } from "../shared/states";
import { KNOWN_ACTIONS, PAGE_SIZES, actorLabel, deviceLabel, fromLocalInput, logParams, logQuery, parseLogView, toLocalInput, type LogView } from "./view";

export default function SecurityLogScreen() {
  const { query } = useLocation();
  const view = parseLogView(query);
  const q = logQuery(view);
  const list = useLive(JSON.stringify(q), (signal) => api.get("/api/v1/audit-log", { query: q, signal }));
  const [people, setPeople] = useState<User[]>([]);
  useEffect(() => {
    api.get("/api/v1/users", { query: { size: 100 } }).then(
      (p) => setPeople(p.items),
      () => setPeople([]),
    );
  }, []);
  const change = (next: Partial<LogView>) => setQuery(logParams({ ...view, page: 1, ...next }));
  const toggle = (a: string) => change({ actions: view.actions.includes(a) ? view.actions.filter((x) => x !== a) : [...view.actions, a] });
  const known = new Set(KNOWN_ACTIONS.flatMap(([, a]) => a));
  const extra = view.actions.filter((a) => !known.has(a));
  const filtered = view.userId || view.actions.length || view.since || view.until;
  const data = list.data;

  return (
    <section class="crm security-log" aria-labelledby="log-title">
      <div class="screen-head">
        <h1 id="log-title">Security log</h1>
        <a class="button" href={href("/api/v1/audit-log", { query: { ...q, page: undefined, size: undefined, format: "csv" } })} download>
          Download CSV
        </a>
      </div>
      <p class="muted">Who did what in this organization, when and from where, newest first.</p>
      <div class="log-filters">
        <div class="toolbar">
          <div class="field">
            <label for="log-person">Person</label>
            <select id="log-person" value={view.userId} onChange={(e) => change({ userId: (e.target as HTMLSelectElement).value })}>
              <option value="">Everyone</option>
              {people.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.full_name ? `${u.full_name} (${u.email})` : u.email}
                </option>
              ))}
              {view.userId && !people.some((u) => u.id === view.userId) && <option value={view.userId}>A chosen person</option>}
            </select>
          </div>
          <div class="field">
            <label for="log-since">From</label>
            <input id="log-since" type="datetime-local" value={toLocalInput(view.since)} onChange={(e) => change({ since: fromLocalInput((e.target as HTMLInputElement).value) })} />
          </div>
          <div class="field">
            <label for="log-until">Until</label>
            <input id="log-until" type="datetime-local" value={toLocalInput(view.until)} onChange={(e) => change({ until: fromLocalInput((e.target as HTMLInputElement).value) })} />
          </div>
          {filtered && (
            <button type="button" class="link" onClick={() => setQuery({ user_id: null, action: null, since: null, until: null, page: null })}>
              Clear filters
            </button>
          )}
        </div>
        <details class="action-filter" open={view.actions.length > 0}>
          <summary>
            Actions {view.actions.length === 0 ? <span class="hint">(all)</span> : <span class="hint">({view.actions.length} chosen)</span>}
          </summary>
          {KNOWN_ACTIONS.map(([group, actions]) => (
            <fieldset key={group}>
              <legend>{group}</legend>
              {actions.map((a) => (
                <label key={a} class={`chip${view.actions.includes(a) ? " on" : ""}`}>
                  <input type="checkbox" checked={view.actions.includes(a)} onChange={() => toggle(a)} />
                  <code>{a}</code>
                </label>
              ))}
            </fieldset>
          ))}
          {extra.map((a) => (
            <label key={a} class="chip on">
              <input type="checkbox" checked onChange={() => toggle(a)} />
              <code>{a}</code>
            </label>
          ))}
        </details>
      </div>
      {list.error ? (
        <ErrorBox error={list.error} retry={list.reload} />
      ) : !data ? (
        <Loading label="Loading the log…" />
      ) : data.items.length === 0 ? (
        <Empty>
          <p>{filtered ? "No entries match these filters." : "Nothing has been logged yet."}</p>
        </Empty>
      ) : (
        <div class={`table-wrap${list.loading ? " dim" : ""}`} aria-busy={list.loading} tabIndex={0} role="region" aria-label="Audit log entries">
          <table>
            <caption class="visually-hidden">Audit log entries</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Action</th>
                <th scope="col" class="hide-narrow">IP address</th>
                <th scope="col" class="hide-narrow">Device</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {data.items.map((r) => (
                <tr key={r.id}>
                  <td>
                    <time dateTime={r.created_at}>{formatDateTime(r.created_at)}</time>
                  </td>
                  <td>{r.user_name || r.user_email ? actorLabel(r) : <span class="muted">{actorLabel(r) ?? "—"}</span>}</td>
                  <td>
                    <code>{r.action}</code>
                  </td>
                  <td class="hide-narrow">{r.ip ?? "—"}</td>
                  <td class="hide-narrow" title={r.user_agent ?? undefined}>
                    {deviceLabel(r, device)}
                  </td>
                  <td class="detail">{r.detail ? <code>{JSON.stringify(r.detail)}</code> : "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {data && data.total > 0 && (
        <Pager
          page={view.page}
          pages={data.pages}
          total={data.total}
          size={view.size}
          noun="entries"
          sizes={PAGE_SIZES}
          onPage={(p) => setQuery({ page: p > 1 ? p : null })}
          onSize={(s) => setQuery({ size: s === 20 ? null : s, page: null })}
        />
      )}
    </section>
  );
}
