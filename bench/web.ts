// bun run bench web: the web app in Debian's Chromium against dist/suite, on a tenant of
// BENCH_WEB_DEALS deals (1,000,000). Measures (p50/p95): cold load of /sign-in to a usable form
// (a new browser context each time: nothing cached), sign-in to the first row of the deal table,
// keystroke to updated deal table while searching: each term typed character by character
// into the deals searchbox, from the last key's keydown to the URL holding the term and the table
// body no longer `aria-busy` (the screen's 80 ms debounce included; its parts are printed too);
// the board's first paint (a load of /deals?view=board to every column's count and its first
// cards), the deal page with its timeline (a load of /deals/{id}, each deal with a few notes, to
// the timeline's entries shown) and a card moved with its "Move to…" list (the change to the
// server's answer to the stage change). Loads are timed from the navigation's start, in the page.
// Options: BENCH_WEB_DEALS, BENCH_WEB_RUNS (20), BENCH_WEB_SEARCHES (50 common and 20 rare terms),
// BENCH_WEB_DB=<file> (seed that file once, reuse it on later runs with its `<file>.keys`: seeding a
// million deals takes one to two minutes), BENCH_KEEP=1 (keep the temporary directory).
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { type Page, chromium } from "playwright-core";
import { freePort, freshBinary, waitFor } from "./process-support";
import { BENCH_PASSWORD, seedFile } from "./seed";
import { percentile } from "./stats";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const DEALS = env("BENCH_WEB_DEALS", 1_000_000);
const RUNS = env("BENCH_WEB_RUNS", 20);
const SEARCHES = env("BENCH_WEB_SEARCHES", 50);
const PASSWORD = BENCH_PASSWORD;
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
  const seeded = await seedFile(db, [{ subdomain: "webco", name: "Web Co", email: EMAIL, deals: DEALS }], PASSWORD);
  tenantId = seeded.tenantIds[0]!;
  say(`  seeded in ${seeded.seconds.toFixed(0)} s`);
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

const pct = (xs: number[], p: number) => percentile(xs, p / 100);
const line = (name: string, xs: number[], target?: number) =>
  say(
    `${name.padEnd(46)} p50 ${pct(xs, 50).toFixed(0).padStart(5)} ms  p95 ${pct(xs, 95).toFixed(0).padStart(5)} ms  (n=${xs.length}${target ? `, target ${target} ms` : ""})`,
  );

interface Sample {
  /** keydown of the last key to the table body updated (no longer aria-busy, the URL holding the term). */
  typed: number;
  /** keydown to the request leaving the page (the debounce and the router). */
  toRequest: number;
  /** the request's start to its answer's last byte (loopback and the server). */
  request: number;
  /** the answer's last byte to the table updated (JSON and rendering). */
  render: number;
}

/**
 * Types each term into the deals searchbox, character by character. Times are taken in the page
 * (keydown's performance.now(), Resource Timing for the request, a MutationObserver for the table),
 * so the DevTools protocol's own round trips are not counted.
 */
async function search(page: Page, terms: string[], n: number): Promise<Sample[]> {
  const out: Sample[] = [];
  const box = page.getByRole("searchbox", { name: "Search deals" });
  for (let i = 0; i < n; i++) {
    const term = terms[i % terms.length]!;
    await box.fill("");
    await page.waitForFunction(() => {
      const g = globalThis as any;
      return !new URLSearchParams(g.location.search).get("search") && !g.document.querySelector('tbody[aria-busy="true"]');
    });
    await box.pressSequentially(term.slice(0, -1));
    await page.evaluate(`(() => {
      const term = ${JSON.stringify(term)};
      performance.clearResourceTimings();
      window.__bench = { key: null, done: null };
      document.addEventListener("keydown", () => { window.__bench.key ??= performance.now(); }, { capture: true, once: true });
      const check = () => {
        if (new URLSearchParams(location.search).get("search") === term && !document.querySelector('tbody[aria-busy="true"]')) {
          window.__bench.done ??= performance.now();
          obs.disconnect();
        }
      };
      const obs = new MutationObserver(check);
      obs.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    })()`);
    await box.press(term.slice(-1));
    await page.waitForFunction(() => (globalThis as any).__bench.done !== null);
    const s = (await page.evaluate(`(() => {
      const b = window.__bench;
      const r = performance.getEntriesByType("resource").filter((e) => e.name.includes("/api/v1/crm/deals?") && new URL(e.name).searchParams.get("search") === ${JSON.stringify(term)}).pop();
      return { typed: b.done - b.key, toRequest: r ? r.startTime - b.key : NaN, request: r ? r.responseEnd - r.startTime : NaN, render: r ? b.done - r.responseEnd : NaN };
    })()`)) as Sample;
    out.push(s);
  }
  return out;
}

/** A page load's end, in the page's own clock (0 is the navigation's start). */
async function loaded(page: Page, url: string, done: () => unknown): Promise<number> {
  await page.goto(url);
  return (await (await page.waitForFunction(done)).jsonValue()) as number;
}

/** Loads the board until every column has its count and the non-empty ones their first cards. */
async function boardPaint(page: Page, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++)
    out.push(
      await loaded(page, `${origin}/deals?view=board`, () => {
        const d = (globalThis as any).document;
        const heads = [...d.querySelectorAll(".column-count")];
        if (heads.length === 0 || heads.some((h: any) => h.textContent.includes("Counting"))) return false;
        const cols = [...d.querySelectorAll(".column-cards")];
        const pending = cols.some((c: any) => !c.querySelector("[data-deal-id]") && !c.querySelector(".column-empty"));
        return !pending && (globalThis as any).performance.now();
      }),
    );
  return out;
}

/** Loads deal pages until their timeline's entries are shown. */
async function dealPages(page: Page, ids: string[]): Promise<number[]> {
  const out: number[] = [];
  for (const id of ids)
    out.push(
      await loaded(page, `${origin}/deals/${id}`, () => {
        const d = (globalThis as any).document;
        return d.querySelector(".timeline ol.entries li") && (globalThis as any).performance.now();
      }),
    );
  return out;
}

/** Moves the first card of the first column to the next stage: the change to the answer of its PATCH. */
async function cardMoves(page: Page, n: number): Promise<number[]> {
  const out: number[] = [];
  await boardPaint(page, 1);
  for (let i = 0; i < n; i++) {
    const card = page.locator(".column-cards [data-deal-id]").first();
    const id = await card.getAttribute("data-deal-id");
    const select = card.locator("select.card-move");
    const to = await select.locator("option:not([disabled])").first().getAttribute("value");
    await page.evaluate(`(() => {
      performance.clearResourceTimings();
      window.__move = null;
      document.addEventListener("change", () => { window.__move ??= performance.now(); }, { capture: true, once: true });
    })()`);
    await select.selectOption(to!);
    const took = await page.waitForFunction((path: string) => {
      const g = globalThis as any;
      const r = g.performance.getEntriesByType("resource").find((e: any) => new URL(e.name).pathname === path);
      return r && r.responseEnd > 0 && g.__move !== null && r.responseEnd - g.__move;
    }, `/api/v1/crm/deals/${id}`);
    out.push((await took.jsonValue()) as number);
    // Let the live update's quiet reload settle before the next move picks its card.
    await page.waitForTimeout(300);
  }
  return out;
}

/** A few notes on each deal the deal-page figures open, so their timelines have entries to show. */
async function withNotes(ids: string[]): Promise<void> {
  const base = `http://127.0.0.1:${port}`;
  const login = await fetch(`${base}/api/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: EMAIL, password: PASSWORD }) });
  const { access_token } = (await login.json()) as { access_token: string };
  for (const id of ids)
    for (let k = 0; k < 3; k++) {
      const r = await fetch(`${base}/api/v1/crm/deals/${id}/notes`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${access_token}` },
        body: JSON.stringify({ body: `Called them about the proposal, note ${k + 1}.` }),
      });
      if (r.status !== 201) throw new Error(`adding a note answered ${r.status}`);
    }
}

const PAGES = Math.max(5, Math.ceil(RUNS / 2));
const sampleIds = (() => {
  const r = new Database(db, { readonly: true });
  const n = DEALS;
  const ids: string[] = [];
  const at = r.query("SELECT id FROM deals WHERE tenant_id = ? AND rowid >= ? ORDER BY rowid LIMIT 1");
  for (let i = 0; i < PAGES; i++) ids.push((at.get(tenantId, 1 + Math.floor(Math.random() * n)) as { id: string } | null)?.id ?? "");
  r.close();
  return ids.filter(Boolean);
})();
await withNotes(sampleIds);

const load = loadavg();
const cold: number[] = [];
const signIn: number[] = [];
let commonRun: Sample[] = [];
let rareRun: Sample[] = [];
let board: number[] = [];
let dealPage: number[] = [];
let moves: number[] = [];
try {
  for (let i = 0; i < RUNS; i++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    // In the page's own clock: from the navigation's start (performance.now() 0) to the button
    // enabled; from the click to a row of the deal table, no longer loading.
    await page.goto(`${origin}/sign-in`);
    // Functions, not strings: the page's CSP forbids eval, which a string predicate needs.
    const ready = await page.waitForFunction(() => {
      const g = globalThis as any;
      return [...g.document.querySelectorAll("button")].some((b: any) => b.textContent.trim() === "Sign in" && !b.disabled) && g.performance.now();
    });
    cold.push((await ready.jsonValue()) as number);
    await page.getByLabel("Email").fill(EMAIL);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.evaluate(`(() => { window.__click = null; document.addEventListener("click", () => { window.__click ??= performance.now(); }, { capture: true, once: true }); })()`);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    const shown = await page.waitForFunction(() => {
      const g = globalThis as any;
      return g.location.pathname === "/deals" && g.__click !== null && g.document.querySelector('table tbody:not([aria-busy="true"]) tr') && g.performance.now() - g.__click;
    });
    signIn.push((await shown.jsonValue()) as number);
    if (i === RUNS - 1) {
      commonRun = await search(page, common, SEARCHES);
      rareRun = await search(page, rare, Math.ceil(SEARCHES / 2.5));
      board = await boardPaint(page, PAGES);
      dealPage = await dealPages(page, sampleIds);
      moves = await cardMoves(page, PAGES);
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
for (const [label, run] of [["common", commonRun], ["rare", rareRun]] as const) {
  line(`keystroke to updated table, ${label} terms`, run.map((x) => x.typed), 150);
  line("  keydown to request sent (debounce)", run.map((x) => x.toRequest));
  line("  request to answer (server)", run.map((x) => x.request));
  line("  answer to table updated (render)", run.map((x) => x.render));
}
line("board first paint (load to counts and cards)", board, 400);
line("deal page with its timeline (load to entries)", dealPage, 300);
line("card moved to the server's answer", moves, 150);
say(budgetLine);
mkdirSync(join(root, "bench", "results"), { recursive: true });
const file = join(root, "bench", "results", `web-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
writeFileSync(
  file,
  JSON.stringify({ deals: DEALS, load_before: load, load_after: loadAfter, cold, signIn, common: commonRun, rare: rareRun, board, dealPage, moves, terms: { common: common.slice(0, SEARCHES), rare }, budget: budgetLine }, null, 2),
);
say(`wrote ${file}`);
if (dir && !process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
