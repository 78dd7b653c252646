// bun run bench export: CSV export and import through the built binary. Seeds (or reuses, with
// BENCH_EXPORT_DB) a database with one tenant of BENCH_EXPORT_DEALS deals (1,000,000), serves it,
// streams GET /crm/deals/export (whole, then filtered and sorted by a nullable column), and
// imports BENCH_IMPORT_ROWS (100,000) of the exported rows into a new organization (dry run,
// then for real). Prints each step's time and the server's peak RSS (sampled every 50 ms).
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { csvLine } from "../src/kernel/csv";
import { cpuOf, freePort, freshBinary, waitFor } from "./process-support";
import { BENCH_PASSWORD, seedFile } from "./seed";

const DEALS = Number(process.env.BENCH_EXPORT_DEALS ?? 1_000_000);
const IMPORT_ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 100_000);
const PASSWORD = BENCH_PASSWORD;
const root = join(import.meta.dir, "..");
const say = (s: string) => process.stdout.write(`${s}\n`);
const dir = mkdtempSync(join(tmpdir(), "suite-export-bench-"));
const dbFile = process.env.BENCH_EXPORT_DB ?? join(dir, "export.db");
// The exporting organization: the one holding the most deals (a cached database of another bench,
// e.g. BENCH_WEB_DB's "webco", serves as well; its admin is admin@<subdomain>.example).
let sub = "exportco";

if (!existsSync(dbFile)) {
  say(`seeding ${dbFile}: 1 tenant of ${DEALS} deals...`);
  const { seconds } = await seedFile(dbFile, [{ subdomain: "exportco", name: "Export Co", deals: DEALS }], PASSWORD);
  say(`  seeded in ${seconds.toFixed(1)} s`);
} else {
  const ro = new Database(dbFile, { readonly: true });
  sub = (ro.query("SELECT t.subdomain FROM deals d JOIN tenants t ON t.id = d.tenant_id GROUP BY d.tenant_id ORDER BY count(*) DESC LIMIT 1").get() as { subdomain: string }).subdomain;
  ro.close();
  say(`reusing ${dbFile} (organization ${sub})`);
}

const binary = freshBinary(root, say);
const port = await freePort();
const server = Bun.spawn([binary, "serve", "--port", String(port), "--host", "127.0.0.1", "--db", dbFile], {
  env: { ...process.env, SUITE_ACCESS_TTL: "7200", SUITE_JWT_SECRET: "bench-secret-bench-secret-bench-secret-0123" },
  stdout: "ignore",
  stderr: "inherit",
});
const rssKb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"))?.[1] ?? 0);
let peakKb = 0;
const sampler = setInterval(() => {
  try {
    peakKb = Math.max(peakKb, rssKb());
  } catch {}
}, 50);
const base = `http://127.0.0.1:${port}`;
const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`;

/** Runs a step, reporting its time and the server's peak RSS during it. */
async function step<T>(name: string, run: () => Promise<T>, describe: (r: T) => string): Promise<T> {
  peakKb = rssKb();
  const before = peakKb;
  const started = performance.now();
  const cpuBefore = cpuOf(server.pid).total;
  const r = await run();
  const seconds = (performance.now() - started) / 1000;
  // The server's CPU seconds: what the step costs whatever else shares the cores (wall time does not).
  const cpu = cpuOf(server.pid).total - cpuBefore;
  say(`${name.padEnd(44)} ${seconds.toFixed(2).padStart(7)} s (server CPU ${cpu.toFixed(1)} s)   RSS ${mb(before)} -> peak ${mb(peakKb)}   ${describe(r)}`);
  return r;
}

try {
  await waitFor(`${base}/api/v1/health`);
  say(`load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")} (2 cores shared: wall times grow with it, CPU seconds much less)`);
  const token = async (email: string, sub: string) => {
    const r = await fetch(`${base}/api/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json", "x-tenant": sub }, body: JSON.stringify({ email, password: PASSWORD }) });
    if (!r.ok) throw new Error(`login: ${r.status} ${await r.text()}`);
    return ((await r.json()) as { access_token: string }).access_token;
  };
  const admin = await token(`admin@${sub}.example`, sub);

  /** Streams an export, keeping only the first `keep` lines: the client holds no more than that either. */
  const download = async (query: string, keep = 0) => {
    const res = await fetch(`${base}/api/v1/crm/deals/export${query}`, { headers: { authorization: `Bearer ${admin}` } });
    if (!res.ok) throw new Error(`export: ${res.status} ${await res.text()}`);
    let bytes = 0;
    let lines = 0;
    const kept: string[] = [];
    let tail = "";
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.byteLength;
      for (const b of chunk) if (b === 10) lines++;
      if (kept.length < keep) {
        const parts = (tail + decoder.decode(chunk, { stream: true })).split("\r\n");
        tail = parts.pop()!;
        kept.push(...parts.slice(0, keep - kept.length));
      }
    }
    return { bytes, lines, kept };
  };
  const described = (r: { bytes: number; lines: number }) => `${r.lines - 1} rows, ${(r.bytes / 2 ** 20).toFixed(0)} MiB`;
  await step("export all deals (created_at desc)", () => download(""), described);
  await step("export won+lost by close_date desc", () => download("?stage=won&stage=lost&sort_by=close_date&sort_dir=desc"), described);
  await step("export searched 'ion' by value asc", () => download("?search=ion&sort_by=value&sort_dir=asc"), described);
  const sample = await step(`export first ${IMPORT_ROWS} rows (kept)`, () => download("?sort_by=title", IMPORT_ROWS + 1), (r) => `${r.kept.length - 1} rows kept`);

  // A new organization to import into (the exporting organization's members are not in it).
  const signup = await fetch(`${base}/api/v1/auth/signup`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    // A new one on each run: a reused database keeps the last run's.
    body: JSON.stringify({ email: "admin@importco.example", password: PASSWORD, tenant_name: "Import Co", subdomain: `importco${Date.now().toString(36)}` }),
  });
  if (!signup.ok) throw new Error(`signup: ${signup.status} ${await signup.text()}`);
  const importer = ((await signup.json()) as { access_token: string }).access_token;
  const rows = parse(sample.kept.join("\r\n"), { bom: true }) as string[][];
  const at = rows[0]!.indexOf("assignee_email");
  // The exporting tenant's members do not exist here: their addresses are emptied (the rest is as exported).
  const csv = rows.map((r, i) => (i === 0 ? `${r.join(",")}\r\n` : csvLine(r.map((c, j) => (j === at ? null : c))))).join("");
  type Answer = { id?: string; status?: string; valid_rows?: number; error_count?: number; created?: unknown; errors?: unknown[]; added?: number };
  const upload = (query: string) => async () => {
    const r = await fetch(`${base}/api/v1/crm/deals/import?${query}`, { method: "POST", headers: { authorization: `Bearer ${importer}`, "content-type": "text/csv" }, body: csv });
    let body = (await r.json()) as Answer;
    // A real import is a job (issue 27): the step lasts until it has finished.
    while (r.status === 202 && body.status === "running") {
      await Bun.sleep(100);
      body = (await (await fetch(`${base}/api/v1/crm/jobs/${body.id}`, { headers: { authorization: `Bearer ${importer}` } })).json()) as Answer;
    }
    return { status: r.status, body };
  };
  const shown = (r: { status: number; body: Answer }) =>
    r.status === 202
      ? `job ${r.body.status}: added ${r.body.added}, errors ${r.body.error_count}`
      : `${r.status} valid ${r.body.valid_rows} errors ${r.body.error_count} created ${JSON.stringify(r.body.created)} ${r.body.error_count ? JSON.stringify(r.body.errors?.slice(0, 2)) : ""}`;
  say(`import file: ${(csv.length / 2 ** 20).toFixed(1)} MiB`);
  await step(`import ${IMPORT_ROWS} deals, dry run`, upload("dry_run=true&create_missing=true"), shown);
  await step(`import ${IMPORT_ROWS} deals`, upload("create_missing=true"), shown);
} finally {
  clearInterval(sampler);
  server.kill();
  await server.exited;
  if (!process.env.BENCH_EXPORT_DB && !process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
}
