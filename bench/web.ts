// bun run bench web: the web app in Debian's Chromium against dist/suite, on a tenant of
// BENCH_WEB_DEALS deals (1,000,000). Measures (p50/p95): cold load of /sign-in to a usable form
// (a new browser context each time: nothing cached), sign-in to the first row of the deal table,
// and keystroke to updated deal table while searching: each term typed character by character
// into the deals searchbox, from the last keystroke to the URL holding the term and the table
// body no longer `aria-busy` (the screen's 80 ms debounce included; the time from the request
// leaving the page to the table updated is printed beside it).
// Options: BENCH_WEB_DEALS, BENCH_WEB_RUNS (20), BENCH_WEB_SEARCHES (50 common and 20 rare terms),
// BENCH_WEB_DB=<file> (seed that file once, reuse it on later runs with its `<file>.keys`: seeding a
// million deals takes one to two minutes), BENCH_KEEP=1 (keep the temporary directory).
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { type Page, chromium } from "playwright-core";
import { loadConfig } from "../src/config";
import { createContext } from "../src/context";
import { bulkSeed } from "../src/crm/bulk-load";
import { freePort, freshBinary, waitFor } from "./process-support";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const DEALS = env("BENCH_WEB_DEALS", 1_000_000);
const RUNS = env("BENCH_WEB_RUNS", 20);
const SEARCHES = env("BENCH_WEB_SEARCHES", 50);
const PASSWORD = "bench password 1";
const EMAIL = "admin@webco.example";
const root = join(import.meta.dir, "..");
const cached = process.env.BENCH_WEB_DB;
const dir = cached ? null : mkdtempSync(join(tmpdir(), "suite-bench-web-"));
const db = cached ?? join(dir!, "bench.db");
const say = (s: string) => process.stdout.write(`${s}\n`);

let tenantId: string;
if (cached && existsSync(cached)) {
  const ro = new Database(cached, { readonly: true });
  tenantId = (ro.query("SELECT id FROM tenants WHERE subdomain = 'webco'").get() as { id: string }).id;
  const n = (ro.query("SELECT count(*) AS n FROM deals WHERE tenant_id = ?").get(tenantId) as { n: number }).n;
  ro.close();
  if (n !== DEALS) throw new Error(`${cached} holds ${n} deals, not ${DEALS}: delete it or set BENCH_WEB_DEALS=${n}`);
  say(`reusing ${cached} (${n} deals)`);
} else {
  say(`seeding ${DEALS} deals into ${db}...`);
  const started = performance.now();
  const ctx = createContext({ config: loadConfig({}, { SUITE_DB: db }), log: () => {} });
  const { tenant } = await ctx.tenants.createOrganization({ email: EMAIL, password: PASSWORD, tenant_name: "Web Co", subdomain: "webco" }, { ip: null, userAgent: "bench" }, "cli");
  bulkSeed(ctx.db, [{ tenantId: tenant.id, subdomain: "webco", deals: DEALS, passwordHash: await ctx.hasher.hash(PASSWORD) }], ctx.now());
  ctx.close();
  tenantId = tenant.id;
  say(`  seeded in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

// Common terms: the most frequent words (4+ letters) of what search covers (title, notes, account
// and contact names) over 5,000 deals, each found in thousands of deals. Rare terms: made-up
// company words, a few hundred deals each.
const ro = new Database(db, { readonly: true });
const freq = new Map<string, number>();
for (const { t } of ro.query("SELECT search_text AS t FROM deals WHERE tenant_id = ? LIMIT 5000").all(tenantId) as { t: string }[])
  for (const w of new Set(t.match(/[a-z]{4,}/g) ?? [])) freq.set(w, (freq.get(w) ?? 0) + 1);
const common = [...freq].sort((a, b) => b[1] - a[1]).map(([w]) => w);
const rare = (ro.query("SELECT name FROM accounts WHERE tenant_id = ? ORDER BY id LIMIT 400").all(tenantId) as { name: string }[])
  .map((a) => a.name.split(" ")[0]!.toLowerCase())
  .filter((w, i, all) => w.length >= 3 && all.indexOf(w) === i);
ro.close();

const binary = freshBinary(root, say);
const port = await freePort();
const server = Bun.spawn([binary, "serve", "--port", String(port), "--host", "127.0.0.1", "--db", db], { stdout: "ignore", stderr: "inherit" });
await waitFor(`http://127.0.0.1:${port}/api/v1/health`);
const origin = `http://webco.localhost:${port}`;
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : Number.NaN;
};
const line = (name: string, xs: number[], target?: number) =>
  say(
    `${name.padEnd(46)} p50 ${pct(xs, 50).toFixed(0).padStart(5)} ms  p95 ${pct(xs, 95).toFixed(0).padStart(5)} ms  (n=${xs.length}${target ? `, target ${target} ms` : ""})`,
  );

type G = { location: { search: string }; document: { querySelector: (s: string) => unknown } };

/** Types each term into the deals searchbox; returns keystroke→table and request→table times. */
async function search(page: Page, terms: string[], n: number): Promise<{ typed: number[]; served: number[] }> {
  const typed: number[] = [];
  const served: number[] = [];
  const sent = new Map<string, number>();
  page.on("request", (r) => {
    const u = new URL(r.url());
    if (u.pathname === "/api/v1/crm/deals" && u.searchParams.get("search")) sent.set(u.searchParams.get("search")!, performance.now());
  });
  const box = page.getByRole("searchbox", { name: "Search deals" });
  for (let i = 0; i < n; i++) {
    const term = terms[i % terms.length]!;
    await box.fill("");
    await page.waitForFunction(() => {
      const g = globalThis as unknown as G;
      return !new URLSearchParams(g.location.search).get("search") && !g.document.querySelector('tbody[aria-busy="true"]');
    });
    sent.clear();
    await box.pressSequentially(term.slice(0, -1));
    const t = performance.now();
    await box.press(term.slice(-1));
    await page.waitForFunction((t) => {
      const g = globalThis as unknown as G;
      return new URLSearchParams(g.location.search).get("search") === t && !g.document.querySelector('tbody[aria-busy="true"]');
    }, term);
    const done = performance.now();
    typed.push(done - t);
    if (sent.has(term)) served.push(done - sent.get(term)!);
  }
  return { typed, served };
}

const load = loadavg();
const cold: number[] = [];
const signIn: number[] = [];
let commonRun = { typed: [] as number[], served: [] as number[] };
let rareRun = { typed: [] as number[], served: [] as number[] };
try {
  for (let i = 0; i < RUNS; i++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const t0 = performance.now();
    await page.goto(`${origin}/sign-in`);
    await page.getByRole("button", { name: "Sign in" }).and(page.locator(":enabled")).waitFor();
    cold.push(performance.now() - t0);
    await page.getByLabel("Email").fill(EMAIL);
    await page.getByLabel("Password").fill(PASSWORD);
    const t1 = performance.now();
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${origin}/deals`);
    // The first page of deals: a row of the table, no longer loading.
    await page.locator('table tbody:not([aria-busy="true"]) tr').first().waitFor();
    signIn.push(performance.now() - t1);
    if (i === RUNS - 1) {
      commonRun = await search(page, common, SEARCHES);
      rareRun = await search(page, rare, Math.ceil(SEARCHES / 2.5));
    }
    await context.close();
  }
} finally {
  await browser.close();
  server.kill("SIGTERM");
  await server.exited;
}

// First-load bytes, as the build measured them.
const build = Bun.spawnSync([process.execPath, join(root, "scripts", "build.ts"), "--web-only"], { cwd: root });
const budgetLine = build.stdout.toString().trim();
const loadAfter = loadavg();
say(`\nweb bench: ${DEALS} deals, Chromium, dist/suite; load average ${load.map((l) => l.toFixed(2)).join(" ")} before, ${loadAfter.map((l) => l.toFixed(2)).join(" ")} after`);
line("cold load to usable sign-in form", cold, 500);
line("sign-in to first page of deals", signIn, 500);
line("keystroke to updated table, common terms", commonRun.typed, 150);
line("  of which request sent to table updated", commonRun.served);
line("keystroke to updated table, rare terms", rareRun.typed, 150);
line("  of which request sent to table updated", rareRun.served);
say(budgetLine);
mkdirSync(join(root, "bench", "results"), { recursive: true });
const file = join(root, "bench", "results", `web-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
writeFileSync(
  file,
  JSON.stringify({ deals: DEALS, load_before: load, load_after: loadAfter, cold, signIn, common: commonRun, rare: rareRun, terms: { common: common.slice(0, SEARCHES), rare }, budget: budgetLine }, null, 2),
);
say(`wrote ${file}`);
if (dir && !process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
