/**
 * The one API client every screen uses. The browser holds no token: the HttpOnly cookies carry the
 * session (credentials "same-origin"); every write sends JSON (a body-less POST sends `{}`, as
 * the CSRF check of docs/interface.md#csrf wants). The access token is refreshed shortly before it expires and,
 * once, on a 401 `token_expired`; concurrent calls share one refresh in flight. A 401 that a
 * refresh cannot fix sends the user to sign-in. Creates carry an Idempotency-Key per form
 * submission (submissionKey), so a double click or a retried timeout never makes two records.
 */
import type { Answer, CreatePaths, Init, Method, PathsWith } from "./operations";
import { plainMessage } from "./messages";
import type { ValidationItem } from "./shapes";
import { submissionDone, submissionKey } from "./submission-key";

export type * from "./shapes";

/** An answer other than 2xx: `status`, the contract's `code`, and the 422 items (their `msg` a sentence for a person) when there are some. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly items: ValidationItem[] = [],
    readonly retryAfter: number | null = null,
  ) {
    super(detail);
  }
  /** The 422 message for a field, by its `loc` without the leading "body"/"query". */
  fieldError(...path: (string | number)[]): string | undefined {
    const key = path.join(".");
    return this.items.find((i) => i.loc.slice(1).join(".") === key)?.msg;
  }
}

type Query = Record<string, string | number | boolean | null | undefined | (string | number)[]>;

/** What a call may add to its operation's path parameters, query and body. */
export interface CallOptions {
  /** "omit" on the base domain, whose cookies could not reach the workspace host (see handoff). */
  credentials?: RequestCredentials;
  /** Do not refresh or redirect on a 401 (sign-in, refresh itself, the first /auth/me). */
  noAuthRetry?: boolean;
  signal?: AbortSignal;
  /** Only on the base domain, right after signing in there with credentials "omit" (see handoff). */
  bearer?: string;
}

interface Options extends CallOptions {
  query?: Query;
  body?: unknown;
  /** A file sent as the body itself, as text/csv (the CRM imports), instead of JSON. */
  csv?: Blob | string;
  /** A create: sent with the Idempotency-Key of its form submission (see submissionKey). */
  create?: boolean;
}

/** Access lifetime is 15 minutes by default; refresh a minute before, whatever the server set. */
/** 401 codes that mean "no usable session" (docs/interface.md#errors); the first two are worth a refresh. */
const RETRY_CODES = new Set(["token_expired", "not_authenticated"]);
const SESSION_CODES = new Set([...RETRY_CODES, "token_invalid", "session_revoked"]);

const REFRESH_EVERY_MS = 12 * 60 * 1000;
let refreshTimer: ReturnType<typeof setTimeout> | undefined;
let inFlight: Promise<boolean> | null = null;
let onSignedOut: () => void = () => {
  if (!location.pathname.startsWith("/sign-in")) location.assign(`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`);
};

let onPolicySetup: () => void = () => {};

/** What to do when an answer says the organization's sign-in policy holds the user back (the app re-reads the session and shows the setup screen). */
export function setPolicySetupHandler(f: () => void): void {
  onPolicySetup = f;
}

/** The screen that handles "signed out" (the app sets it; tests replace it). */
export function setSignedOutHandler(f: () => void): void {
  onSignedOut = f;
}

export function queryString(q: Query | undefined): string {
  if (!q) return "";
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined || v === null || v === "" || v === false) continue;
    if (Array.isArray(v)) for (const x of v) p.append(k, String(x));
    else p.append(k, String(v));
  }
  const s = p.toString();
  return s ? `?${s}` : "";
}

async function toError(res: Response): Promise<ApiError> {
  let body: { detail?: unknown; code?: string } = {};
  try {
    body = await res.json();
  } catch {
    /* not JSON: a proxy's page, a network error page (json() has read it all the same) */
    await drain(res);
  }
  const retry = Number(res.headers.get("retry-after"));
  const retryAfter = Number.isFinite(retry) && retry > 0 ? retry : null;
  if (Array.isArray(body.detail)) {
    // What a person reads: each item's message as a sentence about its field (messages.ts).
    const items = (body.detail as ValidationItem[]).map((i) => ({ ...i, msg: plainMessage(i) }));
    return new ApiError(res.status, "validation_error", [...new Set(items.map((i) => i.msg))].join(" "), items, retryAfter);
  }
  const detail = typeof body.detail === "string" ? body.detail : `The server answered ${res.status}.`;
  return new ApiError(res.status, body.code ?? `http_${res.status}`, detail, [], retryAfter);
}

async function send(method: string, path: string, o: Options, idempotencyKey?: string): Promise<Response> {
  const write = method !== "GET" && method !== "HEAD";
  const headers: Record<string, string> = { accept: "application/json" };
  if (write) headers["content-type"] = o.csv !== undefined ? "text/csv" : "application/json";
  if (o.bearer) headers.authorization = `Bearer ${o.bearer}`;
  if (idempotencyKey) headers["idempotency-key"] = idempotencyKey;
  return fetch(`${path}${queryString(o.query)}`, {
    method,
    headers,
    credentials: o.credentials ?? "same-origin",
    body: write ? (o.csv ?? JSON.stringify(o.body ?? {})) : undefined,
    signal: o.signal,
  });
}

/**
 * Reads an answer's body to its end when nothing else will: an unread body keeps the request open
 * in the browser, holding one of its few connections to this host and keeping the page from ever
 * being network-idle. Read rather than cancelled, so the connection can serve the next request.
 */
async function drain(res: Response): Promise<void> {
  if (res.body === null || res.bodyUsed) return;
  await res.arrayBuffer().catch(() => {});
}

/** One refresh for every caller that needs it now; true when the session lives on. */
export function refreshSession(): Promise<boolean> {
  inFlight ??= send("POST", "/api/v1/auth/refresh", {})
    .then(async (res) => {
      // The new tokens travel in the cookies; the body (tokens, or the refusal) is not needed.
      await drain(res);
      if (res.ok) scheduleRefresh();
      return res.ok;
    })
    .catch(() => false)
    .finally(() => {
      inFlight = null;
    });
  return inFlight;
}

/** Called after every sign-in and refresh: the next refresh runs before the access token expires. */
export function scheduleRefresh(ms = REFRESH_EVERY_MS): void {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => void refreshSession(), ms);
}

export function stopRefresh(): void {
  clearTimeout(refreshTimer);
}

/** A retry of a submission the server is still working on waits this long, this many times (about 10 s). */
const IN_PROGRESS_WAIT_MS = 500;
const IN_PROGRESS_TRIES = 20;

export async function request<R>(method: string, path: string, o: Options = {}): Promise<R> {
  if (!o.create) return once<R>(method, path, o);
  const key = submissionKey(path, o.body);
  for (let attempt = 1; ; attempt++) {
    try {
      const answer = await once<R>(method, path, o, key);
      // Done: the next submission of this form is a new one.
      submissionDone(path, key);
      return answer;
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 409) throw e;
      if (e.code === "idempotency_key_reused") {
        submissionDone(path, key);
        throw new ApiError(409, e.code, "This form was already sent with other values. Check the list for it, then send the form again if it is missing.");
      }
      if (e.code !== "idempotency_key_in_progress") throw e;
      // The first send of this submission is still being saved: wait for its answer.
      if (attempt >= IN_PROGRESS_TRIES) {
        throw new ApiError(409, e.code, "Your earlier submission is still being saved. Wait a moment, then check the list before sending the form again.");
      }
      await new Promise((r) => setTimeout(r, IN_PROGRESS_WAIT_MS));
    }
  }
}

async function once<R>(method: string, path: string, o: Options, key?: string): Promise<R> {
  if (inFlight && !o.noAuthRetry) await inFlight;
  let res = await send(method, path, o, key);
  if (res.status === 401 && !o.noAuthRetry) {
    let err = await toError(res);
    // Other 401s (a wrong 2FA code, a wrong password on re-authentication) are the action's answer.
    if (!SESSION_CODES.has(err.code)) throw err;
    if (RETRY_CODES.has(err.code) && (await refreshSession())) {
      res = await send(method, path, o, key);
      if (res.status !== 401) return finish<R>(res);
      err = await toError(res);
      if (!SESSION_CODES.has(err.code)) throw err;
    }
    stopRefresh();
    onSignedOut();
    throw err;
  }
  return finish<R>(res);
}

async function finish<R>(res: Response): Promise<R> {
  if (!res.ok) {
    const err = await toError(res);
    if (err.code === "policy_setup_required") onPolicySetup();
    throw err;
  }
  if (res.status === 204) {
    await drain(res);
    return undefined as R;
  }
  return (await res.json()) as R;
}

/** `{...init}` when the operation needs one (path parameters, a required body), else optional. */
type Args<M extends Method, P extends PathsWith<M>> = {} extends Init<M, P> ? [init?: Init<M, P> & CallOptions] : [init: Init<M, P> & CallOptions];
type Call = { path?: Record<string, string | number>; query?: object; body?: unknown; csv?: Blob | string; create?: boolean } & CallOptions;

/** `/api/v1/users/{id}` with `{id: "u 1"}` → `/api/v1/users/u%201`. */
function fill(path: string, params: Record<string, string | number> = {}): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(String(params[name])));
}

/**
 * The calls that are an action of their own, made signed out or about to be: their 401 is the
 * action's answer (a wrong password, a used link), never a reason to refresh or to sign out.
 */
const OPEN = new Set<PathsWith<"get"> | PathsWith<"post">>([
  "/api/v1/auth/login",
  "/api/v1/auth/2fa/verify",
  "/api/v1/auth/magic-link",
  "/api/v1/auth/magic-verify",
  "/api/v1/auth/signup",
  "/api/v1/auth/invitations/accept",
  "/api/v1/auth/refresh",
  "/api/v1/auth/logout",
  "/api/v1/auth/password/forgot",
  "/api/v1/auth/password/reset",
  "/api/v1/auth/email/verify",
  "/api/v1/auth/not-me",
  "/api/v1/auth/providers/public",
]);

const call =
  (method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE") =>
  <R>(path: string, { path: params, query, ...init }: Call = {}) =>
    request<R>(method, fill(path, params), { ...init, query: query as Query | undefined, noAuthRetry: init.noAuthRetry ?? OPEN.has(path as never) });

const typed = <M extends Method>(method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE") =>
  call(method) as <P extends PathsWith<M>>(path: P, ...init: Args<M, P>) => Promise<Answer<M, P>>;

/**
 * Every API call of the app, typed by the server's OpenAPI document (schema.gen.ts): the path is
 * the document's, with `{parameters}` filled from `path`; `query` and `body` are the operation's.
 * `create` is the POST of a record: one per form submission, however often it is sent
 * (submissionKey); only the operations that take an Idempotency-Key accept it.
 */
export const api = {
  get: typed<"get">("GET"),
  post: typed<"post">("POST"),
  put: typed<"put">("PUT"),
  patch: typed<"patch">("PATCH"),
  delete: typed<"delete">("DELETE"),
  create: <P extends CreatePaths>(path: P, ...init: Args<"post", P>) =>
    call("POST")<Answer<"post", P>>(path, { ...(init[0] as Call), create: true }),
};

/** The address of a GET, for a plain link (a download, a full page load): the session cookie goes with it. */
export const href = <P extends PathsWith<"get">>(path: P, ...init: Args<"get", P>): string => {
  const o = (init[0] ?? {}) as Call;
  return fill(path, o.path) + queryString(o.query as Query | undefined);
};

