// bun run bench web: the web app in Debian's Chromium against dist/suite, on a tenant of
// BENCH_WEB_DEALS deals (1,000,000). Measures (p50/p95): cold load of /sign-in to a usable form
// (a new browser context each time: nothing cached), sign-in to the first page of deals, and
// keystroke to updated deal table while searching common terms (once the deal list has a
// searchbox: the last keystroke of a term, to the URL holding it and the table no longer busy).
// Options: BENCH_WEB_DEALS, BENCH_WEB_RUNS (20), BENCH_WEB_SEARCHES (50), BENCH_KEEP=1.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
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
const dir = mkdtempSync(join(tmpdir(), "suite-bench-web-"));
const db = join(dir, "bench.db");
const say = (s: string) => process.stdout.write(`${s}\n`);

say(`seeding ${DEALS} deals...`);
const ctx = createContext({ config: loadConfig({}, { SUITE_DB: db }), log: () => {} });
const { tenant } = await ctx.tenants.createOrganization({ email: EMAIL, password: PASSWORD, tenant_name: "Web Co", subdomain: "webco" }, { ip: null, userAgent: "bench" }, "cli");
bulkSeed(ctx.db, [{ tenantId: tenant.id, subdomain: "webco", deals: DEALS, passwordHash: await ctx.hasher.hash(PASSWORD) }], ctx.now());
const words = (ctx.db.query("SELECT name FROM accounts WHERE tenant_id = ? ORDER BY id LIMIT 400").all(tenant.id) as { name: string }[])
  .map((a) => a.name.split(" ")[0]!.toLowerCase())
  .filter((w, i, all) => w.length >= 3 && all.indexOf(w) === i);
ctx.close();

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
const line = (name: string, xs: number[], target: number) =>
  say(`${name.padEnd(34)} p50 ${pct(xs, 50).toFixed(0).padStart(5)} ms  p95 ${pct(xs, 95).toFixed(0).padStart(5)} ms  (n=${xs.length}, target ${target} ms)`);

const cold: number[] = [];
const signIn: number[] = [];
const typing: number[] = [];
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
    // The first page of deals: a row of the table (or, before the CRM screens, the screen's heading).
    await page.locator("table tbody tr, h1").first().waitFor();
    signIn.push(performance.now() - t1);

    if (i === RUNS - 1 && (await page.getByRole("searchbox").count()) > 0) {
      const box = page.getByRole("searchbox").first();
      for (let n = 0; n < SEARCHES; n++) {
        const term = words[n % words.length]!;
        await box.fill("");
        await page.waitForFunction(() => {
          const g = globalThis as unknown as { location: { search: string }; document: { querySelector: (s: string) => unknown } };
          return !new URLSearchParams(g.location.search).get("search") && !g.document.querySelector('[aria-busy="true"]');
        });
        await box.pressSequentially(term.slice(0, -1));
        const t2 = performance.now();
        await box.press(term.slice(-1));
        await page.waitForFunction((t) => {
          const g = globalThis as unknown as { location: { search: string }; document: { querySelector: (s: string) => unknown } };
          return new URLSearchParams(g.location.search).get("search") === t && !g.document.querySelector('[aria-busy="true"]');
        }, term);
        typing.push(performance.now() - t2);
      }
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
say(`\nweb bench: ${DEALS} deals, Chromium, dist/suite`);
line("cold load to usable sign-in form", cold, 500);
line("sign-in to first page of deals", signIn, 500);
if (typing.length) line("keystroke to updated table (search)", typing, 150);
else say("keystroke to updated table: not measured (the deal list has no searchbox yet)");
say(budgetLine);
mkdirSync(join(root, "bench", "results"), { recursive: true });
const file = join(root, "bench", "results", `web-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
writeFileSync(file, JSON.stringify({ deals: DEALS, cold, signIn, typing, budget: budgetLine }, null, 2));
say(`wrote ${file}`);
if (!process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
