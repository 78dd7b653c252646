import { formatDateTime } from "../shared/format";
import { Loading } from "../shared/states";
import { useLoad } from "../shared/use-load";
import { NO_RETRY, api } from "./call";
import { Failure } from "./failure";

const size = (n: number | null) => (n === null ? "Not known (the database does not say)" : n < 1024 * 1024 ? `${(n / 1024).toFixed(0)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`);
const uptime = (s: number) => (s < 60 ? "less than a minute" : s < 3600 ? `${Math.floor(s / 60)} minutes` : s < 86400 ? `${(s / 3600).toFixed(1)} hours` : `${(s / 86400).toFixed(1)} days`);

/** The server: version, uptime, database, key file, its instances, the settings in effect (secrets only as set or not). */
export function Server() {
  const { data, error, reload } = useLoad(() => api.get("/api/v1/operator/server", NO_RETRY), []);
  if (error) return <Failure error={error} retry={reload} />;
  if (!data) return <Loading />;
  return (
    <section>
      <h1>Server</h1>
      <dl class="op-facts">
        <dt>Version</dt><dd>{data.version}</dd>
        <dt>Running for</dt><dd>{uptime(data.uptime_seconds)}</dd>
        <dt>Database</dt><dd>{data.database === "sqlite" ? "SQLite" : "PostgreSQL"}, {size(data.database_bytes)}</dd>
        <dt>Write-ahead log</dt><dd>{size(data.wal_bytes)}</dd>
        <dt>Key file</dt><dd>{data.key_file_present ? "Present beside the database. Keep a copy of it apart from your backups." : "Not found: this server keeps its keys in memory or in settings. Check SUITE_DB."}</dd>
      </dl>
      <h2>Instances</h2>
      <p class="hint">
        {data.database === "sqlite"
          ? "A SQLite database is served by one process: this one."
          : "Every suite process connected to this PostgreSQL database, as the database sees them (a command such as a seed shows too while it runs)."}
      </p>
      <div class="table-wrap">
        <table class="op-table">
          <thead><tr><th>Process</th><th>Address</th><th>Connections</th><th>Connected since</th></tr></thead>
          <tbody>
            {data.instances.map((i) => (
              <tr key={`${i.name}@${i.address ?? ""}`}>
                <td data-label="Process"><code>{i.name}</code>{i.this_instance ? <span class="muted"> (this one)</span> : null}</td>
                <td data-label="Address">{i.address ?? "This machine"}</td>
                <td data-label="Connections">{i.connections}</td>
                <td data-label="Connected since">{formatDateTime(i.connected_since)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2>Settings in effect</h2>
      <p class="hint">Secret settings show only whether they are set; their values never leave the server.</p>
      <div class="table-wrap">
        <table class="op-table">
          <thead><tr><th>Setting</th><th>Value</th></tr></thead>
          <tbody>
            {data.settings.map((s) => (
              <tr key={s.name}><td data-label="Setting"><code>{s.name}</code></td><td data-label="Value">{s.secret ? <em>{s.value === "set" ? "Set (secret)" : "Not set"}</em> : s.value}</td></tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
