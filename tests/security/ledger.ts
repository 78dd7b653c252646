/**
 * The secrets ledger of the whole test run (issue 6, item 5). Every password, token, cookie,
 * TOTP secret, webhook signing secret, code, backup code and mailed link the tests send or receive is noted here, and so
 * is every log line any server of the run writes (the in-process apps of tests/helpers.ts and the
 * `suite` subprocesses the CLI tests start). tests/preload.ts checks, after the last test file,
 * that no noted secret occurs in any noted log output.
 *
 * Matching works on "atoms", maximal runs of token characters, so the check stays fast over tens
 * of thousands of log lines: a token is found when it is logged whole, or its JWT signature is.
 * Secrets with other characters (passwords with spaces, links) are also searched for as text.
 */

const TOKEN_CHARS = /[A-Za-z0-9_.~+/=-]+/g;
const NARROW_CHARS = /[A-Za-z0-9_-]+/g;
/** A token that names its organization (src/kernel/ids.ts newTenantToken): `<tenant id>.<43 characters>`. */
const TENANT_TOKEN = /^[A-Za-z0-9_-]{1,64}\.[A-Za-z0-9_-]{43}$/;
/** What follows a tenant id inside such a token: the dot and the secret. */
const TENANT_PART_FOLLOWS = /^\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/;
/** Shorter values (a bad password in a validation test, "x") would match ordinary words. */
const MIN_SECRET = 6;
const MIN_TEXT_SECRET = 8;

interface State {
  secrets: Map<string, string>;
  logs: string[];
  lines: number;
}

const KEY = Symbol.for("workspace-suite.test-ledger");
const g = globalThis as unknown as Record<symbol, State | undefined>;
const state: State = (g[KEY] ??= { secrets: new Map(), logs: [], lines: 0 });

/** Fields that carry a secret in what a client sends ("code" there is a 2FA code). */
const REQUEST_SECRETS = new Set(["password", "new_password", "current_password", "admin_password", "code", "token", "temp_token", "refresh_token"]);
/** Fields that carry a secret in what the server answers ("code" there is an error code). */
const RESPONSE_SECRETS = new Set(["access_token", "refresh_token", "temp_token", "secret", "otpauth_url", "backup_codes"]);

/** Notes one secret value; `kind` names it in the report, never the value. */
export function noteSecret(kind: string, value: unknown): void {
  if (typeof value !== "string" || value.length < MIN_SECRET) return;
  if (!state.secrets.has(value)) state.secrets.set(value, kind);
}

/** The secrets noted so far (value → kind), a copy. */
export const snapshotSecrets = (): Map<string, string> => new Map(state.secrets);

/** Notes the secret fields of a request body, at any depth. */
export const noteRequestSecrets = (body: unknown) => noteFields(body, REQUEST_SECRETS, 0);
/** Notes the secret fields of a response body, at any depth. */
export const noteResponseSecrets = (body: unknown) => noteFields(body, RESPONSE_SECRETS, 0);

function noteFields(value: unknown, fields: Set<string>, depth: number): void {
  if (depth > 6 || value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    for (const v of value) noteFields(v, fields, depth + 1);
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    if (fields.has(k)) {
      if (typeof v === "string") {
        noteSecret(k, v);
        // A webhook signing secret (whsec_…): its key part alone is the secret too.
        if (v.startsWith("whsec_")) noteSecret(k, v.slice(6));
      }
      else if (Array.isArray(v)) for (const item of v) noteSecret(k, item);
    } else noteFields(v, fields, depth + 1);
  }
}

/** Notes the credentials a request carries and the cookies an answer sets. */
export function noteHeaders(headers: Headers | Record<string, string>): void {
  const get = (name: string) => (headers instanceof Headers ? headers.get(name) : headers[name]) ?? null;
  const auth = get("authorization");
  if (auth?.startsWith("Bearer ")) noteSecret("bearer token", auth.slice(7));
  for (const pair of (get("cookie") ?? "").split(";")) noteSecret("cookie", pair.split("=").slice(1).join("=").trim());
  if (headers instanceof Headers) {
    for (const c of headers.getSetCookie()) noteSecret("set-cookie", c.split(";")[0]!.split("=").slice(1).join("="));
  }
}

/** Notes log output: one JSON object, or a chunk of a subprocess's stdout/stderr. */
export function noteLog(output: unknown): void {
  const text = typeof output === "string" ? output : JSON.stringify(output);
  if (!text) return;
  state.logs.push(text);
  state.lines += typeof output === "string" ? text.split("\n").filter(Boolean).length : 1;
}

function atomsOf(text: string, wide: Set<string>, narrow: Set<string>): void {
  for (const m of text.matchAll(TOKEN_CHARS)) wide.add(m[0]);
  for (const m of text.matchAll(NARROW_CHARS)) narrow.add(m[0]);
}

export interface LedgerReport {
  lines: number;
  secrets: number;
  byKind: Record<string, number>;
  /** Kinds and a 4-character prefix of each secret found: never the secret itself. */
  hits: string[];
}

/** Searches every noted log output for every noted secret. */
export function checkLedger(): LedgerReport {
  return { lines: state.lines, ...searchLogs(state.logs, state.secrets) };
}

/** Which of `secrets` (value → kind) occur in `logs`. */
export function searchLogs(logs: string[], secrets: Map<string, string>): Omit<LedgerReport, "lines"> {
  const wide = new Set<string>();
  const narrow = new Set<string>();
  for (const text of logs) atomsOf(text, wide, narrow);
  // A 6-digit code is only looked for whole: "0.123456", a duration, is not the code 123456.
  const atom = (s: string) => wide.has(s) || (!/^[0-9]+$/.test(s) && narrow.has(s));
  const all = logs.join("\n");
  const hits: string[] = [];
  const byKind: Record<string, number> = {};
  for (const [secret, kind] of secrets) {
    byKind[kind] = (byKind[kind] ?? 0) + 1;
    let found = atom(secret);
    // A JWT logged inside other text still shows its signature as an atom of its own.
    const parts = secret.split(".");
    if (!found && parts.length === 3 && parts[2]!.length >= 20) found = atom(parts[2]!);
    // A mailed token `<tenant id>.<secret>`: its secret part logged alone is found too.
    if (!found && parts.length === 2 && TENANT_TOKEN.test(secret)) found = atom(parts[1]!);
    // A secret that is not one atom (a password with spaces, a link) is searched for as text,
    // and so is each long token inside it (the token of a mailed link), but not the organization
    // part of a `<tenant id>.<secret>` token: logs name organizations by id, and that is no secret.
    if (!found && !/^[A-Za-z0-9_.~+/=-]+$/.test(secret)) {
      found = secret.length >= MIN_TEXT_SECRET && all.includes(secret);
      for (const m of secret.matchAll(NARROW_CHARS)) {
        if (m[0].length < 20 || TENANT_PART_FOLLOWS.test(secret.slice(m.index + m[0].length))) continue;
        if (atom(m[0])) found = true;
      }
    }
    if (found) hits.push(`${kind} (${secret.slice(0, 4)}…)`);
  }
  return { secrets: secrets.size, byKind, hits };
}
