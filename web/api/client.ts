/**
 * The one API client every screen uses. The browser holds no token: the HttpOnly cookies carry the
 * session (credentials "same-origin"); every write sends JSON (a body-less POST sends `{}`, as
 * CONTRACT §5's CSRF check wants). The access token is refreshed shortly before it expires and,
 * once, on a 401 `token_expired`; concurrent calls share one refresh in flight. A 401 that a
 * refresh cannot fix sends the user to sign-in. Creates carry an Idempotency-Key per form
 * submission (submissionKey), so a double click or a retried timeout never makes two records.
 */
import type * as T from "./types";
import { submissionDone, submissionKey } from "./submission-key";

export type * from "./types";

/** An answer other than 2xx: `status`, the contract's `code`, and the 422 items when there are some. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly items: T.ValidationItem[] = [],
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

export interface Options {
  query?: Query;
  body?: unknown;
  /** "omit" on the base domain, whose cookies could not reach the workspace host (see handoff). */
  credentials?: RequestCredentials;
  /** Do not refresh or redirect on a 401 (sign-in, refresh itself, the first /auth/me). */
  noAuthRetry?: boolean;
  signal?: AbortSignal;
  /** Only on the base domain, right after signing in there with credentials "omit" (see handoff). */
  bearer?: string;
  /** A file sent as the body itself, as text/csv (the CRM imports), instead of JSON. */
  csv?: Blob | string;
  /** A create: sent with the Idempotency-Key of its form submission (see submissionKey). */
  create?: boolean;
}

/** Access lifetime is 15 minutes by default; refresh a minute before, whatever the server set. */
/** 401 codes that mean "no usable session" (CONTRACT §1); the first two are worth a refresh. */
const RETRY_CODES = new Set(["token_expired", "not_authenticated"]);
const SESSION_CODES = new Set([...RETRY_CODES, "token_invalid", "session_revoked"]);

const REFRESH_EVERY_MS = 12 * 60 * 1000;
let refreshTimer: ReturnType<typeof setTimeout> | undefined;
let inFlight: Promise<boolean> | null = null;
let onSignedOut: () => void = () => {
  if (!location.pathname.startsWith("/sign-in")) location.assign(`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`);
};

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
    const items = body.detail as T.ValidationItem[];
    return new ApiError(res.status, "validation_error", items.map((i) => i.msg).join("; "), items, retryAfter);
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
  return fetch(`/api/v1${path}${queryString(o.query)}`, {
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
  inFlight ??= send("POST", "/auth/refresh", {})
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
  if (!res.ok) throw await toError(res);
  if (res.status === 204) {
    await drain(res);
    return undefined as R;
  }
  return (await res.json()) as R;
}

const get = <R>(path: string, query?: Query, o: Options = {}) => request<R>("GET", path, { ...o, query });
const post = <R>(path: string, body?: unknown, o: Options = {}) => request<R>("POST", path, { ...o, body });
/** A POST that creates a record: one per form submission, however often it is sent (submissionKey). */
const create = <R>(path: string, body: unknown) => request<R>("POST", path, { body, create: true });
const patch = <R>(path: string, body: unknown) => request<R>("PATCH", path, { body });
const del = (path: string, query?: Query) => request<void>("DELETE", path, { query });

const enc = encodeURIComponent;
/** A list answer, bare or in `{items}` (either shape reads the same). */
type ListAnswer<I> = I[] | { items: I[] };
const items = <I>(a: ListAnswer<I>): I[] => (Array.isArray(a) ? a : (a?.items ?? []));
const open: Options = { noAuthRetry: true };

/** Every endpoint the app uses, typed. */
export const api = {
  auth: {
    login: (body: { email: string; password: string }, o: Options = {}) => post<T.LoginAnswer>("/auth/login", body, { ...open, ...o }),
    verify2fa: (body: { temp_token: string; code: string }, o: Options = {}) => post<T.TokenPair>("/auth/2fa/verify", body, { ...open, ...o }),
    magicLink: (email: string) => post<{ detail: string }>("/auth/magic-link", { email }, open),
    magicVerify: (token: string) => post<T.LoginAnswer>("/auth/magic-verify", { token }, open),
    signup: (body: T.SignupBody, o: Options = {}) => post<T.SignupAnswer>("/auth/signup", body, { ...open, ...o }),
    acceptInvitation: (body: { token: string; password: string; full_name?: string | null }) =>
      post<T.SignupAnswer>("/auth/invitations/accept", body, open),
    /** The base-domain handoff: a refresh token in the body sets this host's cookies. */
    handoff: (refresh_token: string) => post<T.TokenPair>("/auth/refresh", { refresh_token }, open),
    me: (o: Options = {}) => get<T.Me>("/auth/me", undefined, o),
    reauthenticate: (body: { password: string; code?: string }) => post<{ detail: string }>("/auth/reauthenticate", body),
    sessions: () => get<T.Session[]>("/auth/sessions"),
    revokeSession: (session_id: string) => post<T.Confirmation>("/auth/sessions/revoke", { session_id }),
    revokeOthers: () => post<T.Confirmation>("/auth/sessions/revoke-others"),
    logout: () => post<T.Confirmation>("/auth/logout", {}, open),
    logoutAll: () => post<T.Confirmation>("/auth/logout-all"),
  },
  /** Forgotten password, reset, change, and address verification (issue 16). */
  account: {
    forgotPassword: (email: string) => post<{ detail: string }>("/auth/password/forgot", { email }, open),
    resetPassword: (body: { token: string; password: string }) => post<{ detail: string }>("/auth/password/reset", body, open),
    changePassword: (body: { current_password: string; new_password: string }) => post<{ detail: string; revoked: number }>("/auth/password/change", body),
    verifyEmail: (token: string) => post<{ detail: string; email: string; email_verified_at: string }>("/auth/email/verify", { token }, open),
    resendVerification: () => post<{ detail: string }>("/auth/email/resend"),
    /** The new-device mail's "this wasn't me" link: ends that sign-in and every later one. */
    notMe: (token: string) => post<{ detail: string; sessions_ended: number }>("/auth/not-me", { token }, open),
  },
  twoFactor: {
    status: () => get<T.TwoFactorStatus>("/auth/2fa/status"),
    setup: () => post<T.TwoFactorSetup>("/auth/2fa/setup"),
    confirm: (code: string) => post<{ enabled: boolean }>("/auth/2fa/confirm", { code }),
    disable: (body: { password: string; code: string }) => post<{ enabled: boolean }>("/auth/2fa/disable", body),
    regenerate: () => post<{ backup_codes: string[] }>("/auth/2fa/backup-codes"),
  },
  users: {
    list: (q: { page?: number; size?: number; search?: string }) => get<T.Page<T.User>>("/users/", q),
    rename: (id: string, full_name: string | null) => patch<T.User>(`/users/${enc(id)}`, { full_name }),
    /** Admins: role and profile (and the name) in one change. */
    update: (id: string, body: { full_name?: string | null; role?: T.User["role"]; profile_id?: string | null }) => patch<T.User>(`/users/${enc(id)}`, body),
    remove: (id: string, reassignTo: string | null) => del(`/users/${enc(id)}`, { reassign_to: reassignTo }),
    resetTwoFactor: (id: string) => post<T.User>(`/users/${enc(id)}/2fa/reset`),
    unlock: (id: string) => post<T.User>(`/users/${enc(id)}/unlock`),
    profiles: () => get<T.Profile[]>("/users/profiles"),
    invite: (body: { email: string; profile_id?: string | null }) => create<T.Invitation>("/users/invite", body),
    invitations: (q: { page?: number; size?: number; status?: T.InvitationStatus }) => get<T.Page<T.Invitation>>("/users/invitations", q),
    revokeInvitation: (id: string) => post<T.Invitation>(`/users/invitations/${enc(id)}/revoke`),
  },
  tenant: {
    get: () => get<T.Tenant>("/tenant"),
    update: (body: { name?: string; modules?: string[] }) => patch<T.Tenant>("/tenant", body),
  },
  crm: {
    stages: () => get<T.Stage[]>("/crm/pipeline-stages"),
    createStage: (body: T.StageWrite) => create<T.Stage>("/crm/pipeline-stages", body),
    updateStage: (id: string, body: T.StagePatch) => patch<T.Stage>(`/crm/pipeline-stages/${enc(id)}`, body),
    reorderStages: (ids: string[]) => post<T.Stage[]>("/crm/pipeline-stages/reorder", { ids }),
    deleteStage: (id: string, moveTo: string | null) => request<void>("DELETE", `/crm/pipeline-stages/${enc(id)}`, { query: { move_to: moveTo } }),
    deals: (q: T.DealQuery, signal?: AbortSignal) => get<T.Page<T.Deal>>("/crm/deals", q as Query, { signal }),
    deal: (id: string) => get<T.Deal>(`/crm/deals/${enc(id)}`),
    createDeal: (body: T.DealWrite) => create<T.Deal>("/crm/deals", body),
    updateDeal: (id: string, body: Partial<T.DealWrite>) => patch<T.Deal>(`/crm/deals/${enc(id)}`, body),
    deleteDeal: (id: string) => del(`/crm/deals/${enc(id)}`),
    accounts: (q: T.ListQuery, signal?: AbortSignal) => get<T.Page<T.Account>>("/crm/accounts", q as Query, { signal }),
    account: (id: string) => get<T.Account>(`/crm/accounts/${enc(id)}`),
    createAccount: (body: T.AccountWrite) => create<T.Account>("/crm/accounts", body),
    updateAccount: (id: string, body: Partial<T.AccountWrite>) => patch<T.Account>(`/crm/accounts/${enc(id)}`, body),
    deleteAccount: (id: string) => del(`/crm/accounts/${enc(id)}`),
    contacts: (q: T.ListQuery, signal?: AbortSignal) => get<T.Page<T.Contact>>("/crm/contacts", q as Query, { signal }),
    contact: (id: string) => get<T.Contact>(`/crm/contacts/${enc(id)}`),
    createContact: (body: T.ContactWrite) => create<T.Contact>("/crm/contacts", body),
    updateContact: (id: string, body: Partial<T.ContactWrite>) => patch<T.Contact>(`/crm/contacts/${enc(id)}`, body),
    deleteContact: (id: string) => del(`/crm/contacts/${enc(id)}`),
    /** A CSV file checked as the request body (admins): the report, nothing written. */
    checkCsv: (kind: T.TransferKind, file: Blob | string, q: { create_missing?: boolean }) =>
      request<T.ImportReport>("POST", `/crm/${kind}/import`, { query: { ...q, dry_run: true }, csv: file }),
    /** A CSV file imported (admins): a job whose rows are written after the answer. */
    importCsv: (kind: T.TransferKind, file: Blob | string, q: { create_missing?: boolean }) =>
      request<T.ImportJob>("POST", `/crm/${kind}/import`, { query: q, csv: file }),
    /** An import job's progress, and its result once finished. */
    job: (id: string) => get<T.ImportJob>(`/crm/jobs/${enc(id)}`),
  },
  /** Sign-in providers (issue 17): admins configure them; the sign-in page lists the enabled ones. */
  providers: {
    list: () => get<ListAnswer<T.AuthProvider>>("/auth/providers").then(items),
    create: (body: T.ProviderWrite) => post<T.AuthProvider>("/auth/providers", body),
    update: (id: string, body: T.ProviderPatch) => patch<T.AuthProvider>(`/auth/providers/${enc(id)}`, body),
    remove: (id: string) => del(`/auth/providers/${enc(id)}`),
    public: (o: Options = {}) => get<ListAnswer<T.PublicProvider>>("/auth/providers/public", undefined, { ...open, ...o }).then(items),
  },
  /** My linked outside accounts. Linking answers where the browser goes next (the provider). */
  identities: {
    list: () => get<ListAnswer<T.Identity>>("/auth/identities").then(items),
    link: (providerId: string) => post<{ authorization_url: string }>(`/auth/identities/link/${enc(providerId)}`),
    unlink: (id: string) => del(`/auth/identities/${enc(id)}`),
  },
  audit: {
    log: (q: T.AuditQuery, signal?: AbortSignal) => get<T.Page<T.AuditEntry>>("/audit-log", q as Query, { signal }),
    /** A plain link downloads the CSV: the session cookie goes with it, and the server streams it. */
    csvUrl: (q: T.AuditQuery) => `/api/v1/audit-log${queryString({ ...q, page: undefined, size: undefined, format: "csv" } as Query)}`,
  },
};

/** Where the browser goes (a full page load, not a fetch) to sign in through a provider. */
export const oauthStartUrl = (providerId: string) => `/api/v1/auth/oauth/${enc(providerId)}/start`;

/** Where the browser downloads an export: a plain link, the session cookie goes with it. */
export const exportUrl = (kind: T.TransferKind, q: Query = {}) => `/api/v1/crm/${kind}/export${queryString(q)}`;
