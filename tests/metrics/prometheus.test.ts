import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Server, freePort, startServer } from "../server";

// A real Prometheus (Debian's package, as .ci/run installs it) scrapes a real `suite serve` with the
// shipped configuration's scrape settings: the format is what Prometheus parses, not what we think.
const PROMETHEUS = "/usr/bin/prometheus";
const TOKEN = "prometheus-test-token-0123456789abcdef";
const dir = mkdtempSync(join(tmpdir(), "suite-prometheus-"));
let server: Server;
let prometheus: ReturnType<typeof Bun.spawn> | null = null;
let promUrl = "";

beforeAll(async () => {
  if (!existsSync(PROMETHEUS)) throw new Error(`${PROMETHEUS} is missing: apt-get install prometheus (.ci/run does)`);
  server = await startServer(join(dir, "suite.db"), { SUITE_METRICS_TOKEN: TOKEN });
  writeFileSync(join(dir, "token"), TOKEN, { mode: 0o600 });
  // deploy/prometheus.yml's scrape job, pointed at this server, its token file and a 1 s interval.
  const shipped = readFileSync(join(import.meta.dir, "..", "..", "deploy", "prometheus.yml"), "utf8");
  const config = shipped
    .replace("scrape_interval: 15s", "scrape_interval: 1s")
    .replace("credentials_file: /etc/prometheus/suite-metrics-token", `credentials_file: ${join(dir, "token")}`)
    .replace('"127.0.0.1:8000"', `"${new URL(server.url).host}"`)
    .replace("  - alerts.yml", `  - ${join(import.meta.dir, "..", "..", "deploy", "alerts.yml")}`);
  writeFileSync(join(dir, "prometheus.yml"), config);
  const port = freePort();
  promUrl = `http://127.0.0.1:${port}`;
  prometheus = Bun.spawn(
    [PROMETHEUS, `--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "tsdb")}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdout: "ignore", stderr: "pipe" },
  );
});

afterAll(async () => {
  prometheus?.kill();
  await prometheus?.exited;
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A PromQL query's vector, once Prometheus has data for it (it scrapes every second). */
async function query(promql: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(promql)}`).catch(() => null);
    if (res?.ok) {
      const body = (await res.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
      if (body.data.result.length > 0) return body.data.result;
    }
    if (Date.now() > deadline) {
      const targets = await fetch(`${promUrl}/api/v1/targets`).then((r) => r.text()).catch((e) => String(e));
      throw new Error(`Prometheus had no data for ${promql} within 30 s; its targets: ${targets.slice(0, 600)}`);
    }
    await Bun.sleep(250);
  }
}

test("a real Prometheus scrapes /api/v1/metrics with the operator's token and reads every kind of metric", async () => {
  await server.call("POST", "/api/v1/auth/login", { body: { email: "nobody@example.test", password: "not the password" }, tenant: "nosuch" });
  await server.call("GET", "/api/v1/health");
  const up = await query('up{job="suite"} == 1');
  expect(up[0]!.value[1]).toBe("1");
  // The scrape itself succeeded with every line parsed: health of the target, then samples of each kind.
  const targets = (await (await fetch(`${promUrl}/api/v1/targets`)).json()) as { data: { activeTargets: { health: string; lastError: string }[] } };
  expect(targets.data.activeTargets[0]).toMatchObject({ health: "up", lastError: "" });
  expect((await query("suite_build_info"))[0]!.metric.version).toMatch(/^\d+\.\d+\.\d+/);
  expect(Number((await query('suite_http_requests_total{route="/api/v1/health",method="GET",status_class="2xx"}'))[0]!.value[1])).toBeGreaterThanOrEqual(1);
  expect((await query('suite_http_request_duration_seconds_bucket{route="/api/v1/health",le="+Inf"}')).length).toBe(1);
  expect((await query("suite_sign_ins_total")).length).toBeGreaterThanOrEqual(1);
  expect((await query("suite_mail_outbox")).map((r) => r.metric.status).sort()).toEqual(["failed", "pending", "sending"]);
  expect(Number((await query("suite_disk_free_bytes"))[0]!.value[1])).toBeGreaterThan(0);
  expect((await query("suite_stalls")).map((r) => r.metric.kind).sort()).toEqual(["event_loop", "write_hold"]);
  // The checkpointer has looked at the WAL (every 200 ms) and a write transaction has run (the login's audit row).
  expect((await query("suite_sqlite_wal_bytes")).length).toBe(1);
  expect(Number((await query("suite_sqlite_write_hold_max_seconds > 0"))[0]!.value[1])).toBeGreaterThan(0);
  expect((await query("process_resident_memory_bytes")).length).toBe(1);
  // The scrape itself is a request in flight while it is answered.
  expect(Number((await query("suite_http_requests_in_flight"))[0]!.value[1])).toBeGreaterThanOrEqual(1);
  // The shipped alert rules loaded and evaluate (none firing on a healthy server).
  const rules = (await (await fetch(`${promUrl}/api/v1/rules`)).json()) as { data: { groups: { rules: { name: string; health: string }[] }[] } };
  const loaded = rules.data.groups.flatMap((g) => g.rules);
  expect(loaded.map((r) => r.name).sort()).toEqual(["SuiteDiskLow", "SuiteDown", "SuiteMailBacklog", "SuitePostgresPoolSaturated", "SuiteServerErrors", "SuiteSignInFailuresSpike"]);
}, 60_000);
