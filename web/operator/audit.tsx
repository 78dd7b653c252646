import { Pager } from "../shared/pager";
import { setQuery, useLocation } from "../shared/router";
import { device, formatDateTime } from "../shared/format";
import { Empty, Loading } from "../shared/states";
import { useLoad } from "../shared/use-load";
import { NO_RETRY, api } from "./call";
import { Failure } from "./failure";

/** The operators' own audit log, newest first: every sign-in attempt and every action. */
export function Audit() {
  const { query } = useLocation();
  const page = Math.max(1, Number(query.get("page")) || 1);
  const { data, error, reload } = useLoad(() => api.get("/api/v1/operator/audit", { query: { page, size: 50 }, ...NO_RETRY }), [page]);
  return (
    <section>
      <h1>Audit</h1>
      {error ? <Failure error={error} retry={reload} /> : !data ? <Loading /> : data.items.length === 0 ? (
        <Empty>Nothing has happened yet.</Empty>
      ) : (
        <>
          <div class="table-wrap">
            <table class="op-table">
              <thead><tr><th>When</th><th>Operator</th><th>Action</th><th>On</th><th>From</th></tr></thead>
              <tbody>
                {data.items.map((a) => (
                  <tr key={a.id}>
                    <td data-label="When">{formatDateTime(a.created_at)}</td>
                    <td data-label="Operator">{a.operator ?? (a.user_agent === "suite-cli" ? "Command line" : "Unknown")}</td>
                    <td data-label="Action"><code>{a.action}</code></td>
                    <td data-label="On">{a.target ?? ""}</td>
                    <td data-label="From">{a.user_agent === "suite-cli" ? "Command line" : a.ip === null && a.user_agent === null ? "The server (background work)" : `${a.ip ?? "unknown address"}, ${device(a.user_agent)}`}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={data.page} pages={data.pages} total={data.total} size={data.size} noun="entries" onPage={(p) => setQuery({ page: p })} />
        </>
      )}
    </section>
  );
}
