import { Pager } from "../shared/pager";
import { setQuery, useLocation } from "../shared/router";
import { formatDateTime } from "../shared/format";
import { Empty, Loading } from "../shared/states";
import { useLoad } from "../shared/use-load";
import { NO_RETRY, api } from "./call";
import { Failure } from "./failure";

/** CRM imports and exports of every organization, newest first: read only. */
export function Jobs() {
  const { query } = useLocation();
  const page = Math.max(1, Number(query.get("page")) || 1);
  const { data, error, reload } = useLoad(() => api.get("/api/v1/operator/jobs", { query: { page, size: 20 }, ...NO_RETRY }), [page]);
  return (
    <section>
      <h1>Jobs</h1>
      <p class="hint">CSV imports and exports of every organization. Only the organization's own members can start or undo them.</p>
      {error ? <Failure error={error} retry={reload} /> : !data ? <Loading /> : data.items.length === 0 ? (
        <Empty>No imports or exports yet.</Empty>
      ) : (
        <>
          <div class="table-wrap">
            <table class="op-table">
              <thead><tr><th>Started</th><th>Organization</th><th>Kind</th><th>Status</th><th>Progress</th><th>Finished</th></tr></thead>
              <tbody>
                {data.items.map((j) => (
                  <tr key={j.id}>
                    <td data-label="Started">{formatDateTime(j.created_at)}</td>
                    <td data-label="Organization">{j.organization}</td>
                    <td data-label="Kind">{j.kind}</td>
                    <td data-label="Status">{j.status}{j.error_count > 0 && <span class="muted">, {j.error_count} rows with errors</span>}</td>
                    <td data-label="Progress">{j.done.toLocaleString()} of {j.total.toLocaleString()}</td>
                    <td data-label="Finished">{j.finished_at ? formatDateTime(j.finished_at) : "Not yet"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={data.page} pages={data.pages} total={data.total} size={data.size} noun="jobs" onPage={(p) => setQuery({ page: p })} />
        </>
      )}
    </section>
  );
}
