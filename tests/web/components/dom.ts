/**
 * A happy-dom window as this test file's globals (registered here, not in the shared preload:
 * the server's tests must not run with a `window`), removed again after the file.
 */
import { plugin } from "bun";
import { afterAll } from "bun:test";
import { join } from "node:path";
import { Window } from "happy-dom";

// The web app's components use Preact's JSX (web/tsconfig.json). Rather than set that for the
// whole runtime (bunfig's jsx, which every server file and worker of the test run would then be
// compiled with), only web/**/*.tsx is compiled this way, here, for the files that import it.
const WEB_DIR = join(import.meta.dir, "..", "..", "..", "web");
// (Classic JSX calling Preact's h: the transpiler's automatic runtime needs the bundler's imports.)
const preactJsx = new Bun.Transpiler({ loader: "tsx", tsconfig: { compilerOptions: { jsx: "react", jsxFactory: "__h", jsxFragmentFactory: "__Fragment" } } });
plugin({
  name: "web-preact-jsx",
  setup(build) {
    build.onLoad({ filter: new RegExp(`^${WEB_DIR.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/.*\\.tsx$`) }, async (args) => ({
      contents: `import { h as __h, Fragment as __Fragment } from "preact";\n${preactJsx.transformSync(await Bun.file(args.path).text())}`,
      loader: "js",
    }));
  },
});

export function registerDom(url = "http://acme.localhost:8000/"): Window {
  const win = new Window({ url, settings: { disableJavaScriptFileLoading: true, disableCSSFileLoading: true } });
  const added: string[] = [];
  const g = globalThis as Record<string, unknown>;
  const w = win as unknown as Record<string, unknown>;
  for (const key of Object.getOwnPropertyNames(win)) {
    if (key in g || key.startsWith("_")) continue;
    g[key] = w[key];
    added.push(key);
  }
  // These exist in Bun too (navigator, location…): replaced for the file, then put back as they were.
  const replaced = new Map<string, PropertyDescriptor | undefined>();
  for (const key of ["window", "document", "location", "history", "navigator", "localStorage"]) {
    if (added.includes(key)) continue;
    replaced.set(key, Object.getOwnPropertyDescriptor(g, key));
    Object.defineProperty(g, key, { value: w[key], configurable: true, writable: true });
  }
  afterAll(async () => {
    for (const key of added) delete g[key];
    for (const [key, d] of replaced) {
      if (d) Object.defineProperty(g, key, d);
      else delete g[key];
    }
    // Preact's hooks may still have a frame scheduled: let it run on timers instead.
    g.requestAnimationFrame ??= (cb: () => void) => setTimeout(cb, 0);
    g.cancelAnimationFrame ??= (id: ReturnType<typeof setTimeout>) => clearTimeout(id);
    await win.happyDOM.close();
  });
  return win;
}

/** Waits until `check` passes (a render after a fetch), or fails with its last error. */
export async function until(check: () => void, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      return check();
    } catch (e) {
      if (Date.now() > end) throw e;
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}

export interface Call {
  method: string;
  path: string;
  body: unknown;
  headers: Record<string, string>;
  credentials: string | undefined;
}

/** A fake server: `routes` answer by "METHOD /path"; every call is recorded. */
export function fakeFetch(routes: Record<string, (call: Call) => Response | Promise<Response>>) {
  const calls: Call[] = [];
  const original = globalThis.fetch;
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input), "http://acme.localhost:8000");
    const method = init?.method ?? "GET";
    const call: Call = {
      method,
      path: url.pathname + url.search,
      body: init?.body ? JSON.parse(String(init.body)) : undefined,
      headers: { ...(init?.headers as Record<string, string>) },
      credentials: init?.credentials,
    };
    calls.push(call);
    const route = routes[`${method} ${url.pathname}`];
    if (!route) return json(404, { detail: "Not found.", code: "not_found" });
    return route(call);
  }) as typeof fetch;
  return { calls, restore: () => void (globalThis.fetch = original) };
}

export const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
