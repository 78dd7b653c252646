import { Window } from "happy-dom";

/**
 * A browser-like global scope (happy-dom) for the CRM screens' component tests, with `fetch`
 * answered by the test: each call waits in `calls` until the test answers it, so a test decides
 * the order answers arrive in.
 */
export interface FakeCall {
  method: string;
  url: URL;
  body: unknown;
  signal: AbortSignal | undefined;
  done: boolean;
  respond: (status: number, body?: unknown) => void;
}

const GLOBALS = [
  "window",
  "document",
  "navigator",
  "location",
  "history",
  "Node",
  "Element",
  "HTMLElement",
  "HTMLInputElement",
  "HTMLSelectElement",
  "HTMLTextAreaElement",
  "HTMLDialogElement",
  "Event",
  "InputEvent",
  "KeyboardEvent",
  "MouseEvent",
  "FocusEvent",
  "PopStateEvent",
  "SubmitEvent",
  "CustomEvent",
  "MutationObserver",
  "getComputedStyle",
  "requestAnimationFrame",
  "cancelAnimationFrame",
] as const;

export function installDom(url: string) {
  const win = new Window({ url, settings: { disableCSSFileLoading: true } });
  const g = globalThis as Record<string, unknown>;
  const saved = new Map<string, unknown>();
  for (const k of GLOBALS) {
    saved.set(k, g[k]);
    Object.defineProperty(globalThis, k, { value: (win as unknown as Record<string, unknown>)[k], configurable: true, writable: true });
  }
  document.body.innerHTML = '<div id="app"></div>';
  const calls: FakeCall[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = ((input: string, init: RequestInit = {}) =>
    new Promise<Response>((resolve, reject) => {
      const signal = init.signal ?? undefined;
      signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
      const call: FakeCall = {
        done: false,
        method: init.method ?? "GET",
        url: new URL(input, location.origin),
        body: typeof init.body === "string" ? JSON.parse(init.body) : undefined,
        signal,
        respond: (status, body) => {
          call.done = true;
          resolve(new Response(body === undefined ? null : JSON.stringify(body), { status, headers: { "content-type": "application/json" } }));
        },
      };
      calls.push(call);
    })) as typeof fetch;
  return {
    win,
    calls,
    root: document.getElementById("app")!,
    /** The calls to one API path not answered yet. */
    pending: (path: string) => calls.filter((c) => c.url.pathname === `/api/v1${path}` && !c.done && !c.signal?.aborted),
    restore() {
      globalThis.fetch = realFetch;
      for (const [k, v] of saved) Object.defineProperty(globalThis, k, { value: v, configurable: true, writable: true });
      // Preact's hooks may still have a frame scheduled (and cancel it later): run them on timers
      // instead of leaving the frame functions undefined for the next test file (as dom.ts does).
      g.requestAnimationFrame ??= (cb: () => void) => setTimeout(cb, 0);
      g.cancelAnimationFrame ??= (id: ReturnType<typeof setTimeout>) => clearTimeout(id);
      void win.happyDOM.close();
    },
  };
}

/** Waits (in event-loop turns, not time) until `check` holds. */
export async function until(check: () => boolean, what: string, turns = 400): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`never happened: ${what}`);
}

/** Types into an input as a user does: the value, then an input event. */
export function typeInto(input: HTMLInputElement, value: string): void {
  input.value = value;
  input.dispatchEvent(new (window as unknown as { InputEvent: typeof InputEvent }).InputEvent("input", { bubbles: true }));
}
