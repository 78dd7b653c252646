/**
 * End-to-end kit: the built binary (dist/suite, built first when missing or older than its
 * sources), Debian's Chromium driven by playwright-core, and the checks every page gets: no
 * console error, no failed request, no request to another host, no server error, 0 serious or
 * critical axe-core violations; screenshots at 1280 and 390 px into test-artifacts/ (ignored).
 */
import { mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, type Page, chromium } from "playwright-core";
import { type Answer, type CallOptions, startServer } from "../../server";
import { noteSecret } from "../../security/ledger";

const ROOT = join(import.meta.dir, "..", "..", "..");
export const BINARY = join(ROOT, "dist", "suite");
const ARTIFACTS = join(ROOT, "test-artifacts", "web");

function newest(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  let m = 0;
  for (const e of readdirSync(path)) if (e !== "node_modules") m = Math.max(m, newest(join(path, e)));
  return m;
}

/** `npm test` runs before `npm run build` in CI: build the binary here when it is missing or stale. */
export function ensureBinary(): void {
  let built = 0;
  try {
    built = statSync(BINARY).mtimeMs;
  } catch {}
  const sources = Math.max(...["src", "web", "schema.sql", "package.json", "scripts/build.ts"].map((p) => newest(join(ROOT, p))));
  if (built > sources) return;
  const r = Bun.spawnSync([process.execPath, join(ROOT, "scripts", "build.ts")], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`build failed: ${r.stderr.toString()}`);
}

export interface Suite {
  port: number;
  /** The database file (in the folder given to `startSuite`). */
  db: string;
  /** http://<sub>.localhost:<port>, or the base domain's origin without `sub`. */
  origin: (sub?: string) => string;
  /** An API call on 127.0.0.1 (set-up and checks), its secrets noted by the ledger. */
  call: (method: string, path: string, o?: CallOptions) => Promise<Answer>;
  stop: () => Promise<void>;
}

/**
 * dist/suite serve on a free port, base domain localhost, its own database. A port taken between
 * choosing it and binding it (other test files start servers meanwhile) is retried on another.
 */
export async function startSuite(dir: string, env: Record<string, string> = {}): Promise<Suite> {
  mkdirSync(dir, { recursive: true });
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(dir, env);
    } catch (e) {
      if (attempt >= 3 || !/EADDRINUSE|in use/i.test(String(e))) throw e;
    }
  }
}

async function startOnce(dir: string, env: Record<string, string>): Promise<Suite> {
  const db = join(dir, "suite.db");
  const server = await startServer(db, env, [BINARY]);
  const port = Number(new URL(server.url).port);
  return {
    port,
    db,
    origin: (sub?: string) => `http://${sub ? `${sub}.` : ""}localhost:${port}`,
    call: server.call,
    async stop() {
      await server.stop();
    },
  };
}

export async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/** Everything that went wrong on a page, checked by `expectClean`. */
export interface Watch {
  problems: string[];
}

/**
 * A page whose console errors, failed requests, requests to another host and server errors are
 * recorded. Chromium logs every 4xx answer as "Failed to load resource": those are the API
 * answering as designed (a wrong password is 401), so they are not problems; a 4xx for anything
 * but the API (an asset, the page) is.
 */
export async function watchedPage(context: BrowserContext, port: number): Promise<{ page: Page; watch: Watch }> {
  const page = await context.newPage();
  // A loaded 2-core machine (other tests beside these) can take seconds for a navigation or an
  // axe run: every wait is on a condition, with room to spare.
  page.setDefaultNavigationTimeout(45_000);
  page.setDefaultTimeout(30_000);
  const watch: Watch = { problems: [] };
  const ours = (url: string) => {
    const u = new URL(url);
    return u.protocol === "data:" || (u.port === String(port) && (u.hostname === "localhost" || u.hostname.endsWith(".localhost")));
  };
  page.on("console", (m) => {
    if (m.type() !== "error") return;
    if (/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) return;
    watch.problems.push(`console error: ${m.text()}`);
  });
  page.on("pageerror", (e) => watch.problems.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => {
    // A navigation that replaces the page cancels the requests still in flight: not a failure.
    if (r.failure()?.errorText === "net::ERR_ABORTED") return;
    watch.problems.push(`failed request: ${r.method()} ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on("request", (r) => {
    if (!r.url().startsWith("data:") && !ours(r.url())) watch.problems.push(`request to another host: ${r.url()}`);
  });
  page.on("response", (r) => {
    const path = new URL(r.url()).pathname;
    if (r.status() >= 500 || (r.status() >= 400 && !path.startsWith("/api/"))) watch.problems.push(`answer ${r.status()} for ${r.url()}`);
  });
  return { page, watch };
}

/** axe-core in the page (evaluated through the DevTools protocol: the page's CSP stays on). */
const AXE = await Bun.file(join(ROOT, "node_modules", "axe-core", "axe.min.js")).text();

export async function axe(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const result = (await page.evaluate("axe.run(document, { resultTypes: ['violations'] })")) as {
    violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[];
  };
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`);
}

/** Screenshots at 1280 and 390 px wide, the axe check at both widths, and every control reached by Tab. */
export async function look(page: Page, name: string): Promise<string[]> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const found: string[] = [];
  const before = page.viewportSize() ?? { width: 1280, height: 800 };
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 800 });
    await page.screenshot({ path: join(ARTIFACTS, `${name}-${width}.png`), fullPage: true });
    found.push(...(await axe(page)).map((v) => `${name} @${width}px: ${v}`));
  }
  await page.setViewportSize(before);
  found.push(...(await keyboardReach(page, name)));
  return found;
}

/** A password the secrets ledger knows about (it must never reach a log). */
export function secretPassword(label: string): string {
  // Random only: a label such as "owner" would be the address's own name, which new passwords may not hold.
  const p = `pw-${label.length}-${crypto.randomUUID().slice(0, 18)}`;
  noteSecret("password", p);
  return p;
}

/** Polls `check` until it holds (a page's state after an answer), or fails after `ms`. */
export async function waitUntil(check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not so after ${ms} ms: ${check}`);
    await Bun.sleep(20);
  }
}

/**
 * Keyboard alone: Tab from the top of the page (or of the open modal dialog) until every control
 * a pointer could use has had the focus, each with a visible focus ring. Answers what was never
 * reached or was focused without a ring (empty: all good). Radio buttons count once per group.
 */
export async function keyboardReach(page: Page, name: string): Promise<string[]> {
  const [total, everywhere] = (await page.evaluate(`(() => {
    // The dialog on top (a confirmation may open over another dialog): the one holding the focus.
    const open = [...document.querySelectorAll("dialog[open]")];
    // (A dialog opened from inside another is nested in it: the innermost one that holds the focus.)
    const scope = open.filter((d) => d.contains(document.activeElement)).at(-1) ?? open.at(-1) ?? document;
    const all = [...scope.querySelectorAll("a[href], button, input, select, textarea, summary, [tabindex]")];
    const seenGroups = new Set();
    let n = 0;
    for (const el of all) {
      el.removeAttribute("data-kb");
      if (el.disabled || el.getAttribute("tabindex") === "-1" || el.type === "hidden") continue;
      if (!el.getClientRects().length || getComputedStyle(el).visibility === "hidden" || el.closest("dialog:not([open]), [inert]")) continue;
      // The content of a closed <details> takes no focus (Chromium still gives it boxes): its summary does.
      if (el.tagName !== "SUMMARY" && el.closest("details:not([open])")) continue;
      if (el.type === "radio") {
        if (seenGroups.has(el.name)) { el.setAttribute("data-kb", "radio:" + el.name); continue; }
        seenGroups.add(el.name);
        el.setAttribute("data-kb", "radio:" + el.name);
        n++;
        continue;
      }
      el.setAttribute("data-kb", String(n++));
    }
    document.activeElement?.blur?.();
    // Tab walks the whole page when the open dialog is not modal: allow for every control in it.
    return [n, document.querySelectorAll("a[href], button, input, select, textarea, summary, [tabindex]").length];
  })()`)) as [number, number];
  const reached = new Set<string>();
  const problems: string[] = [];
  for (let i = 0; i < everywhere * 2 + 10 && reached.size < total; i++) {
    await page.keyboard.press("Tab");
    const at = (await page.evaluate(`(() => {
      const a = document.activeElement;
      if (!a || !a.hasAttribute("data-kb")) return null;
      const s = getComputedStyle(a);
      const ring = s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0 || s.boxShadow !== "none";
      return { id: a.getAttribute("data-kb"), ring, what: a.tagName.toLowerCase() + " " + (a.getAttribute("aria-label") || a.textContent || a.name || a.id || "").trim().slice(0, 40) };
    })()`)) as { id: string; ring: boolean; what: string } | null;
    if (!at) continue;
    if (!reached.has(at.id) && !at.ring) problems.push(`${name}: ${at.what} has the focus without a visible ring`);
    reached.add(at.id);
  }
  if (reached.size < total) {
    const missed = (await page.evaluate(`[...document.querySelectorAll("[data-kb]")].filter((e) => !${JSON.stringify([...reached])}.includes(e.getAttribute("data-kb"))).map((e) => e.tagName.toLowerCase() + " " + (e.getAttribute("aria-label") || e.textContent || e.name || e.id || "").trim().slice(0, 40))`)) as string[];
    problems.push(...missed.map((m) => `${name}: ${m} is never reached by Tab`));
  }
  return problems;
}
