import { createApp } from "../src/app";
import { type Config, loadConfig } from "../src/config";
import { type Context, type ContextOptions, createContext } from "../src/context";
import type { SqliteStores } from "../src/stores/sqlite";
import { openDatabase } from "../src/db/database";
import { noteHeaders, noteLog, noteRequestSecrets, noteResponseSecrets, noteSecret } from "./security/ledger";

export interface TestAppOptions {
  env?: Record<string, string>;
  /** A database file; default an in-memory one. */
  db?: string;
  now?: () => number;
  limits?: ContextOptions["limits"];
  /** Group commit, as the server runs it (needs `db`). */
  walSync?: ContextOptions["walSync"];
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as is, not JSON-encoded. */
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
  token?: string;
  /** Cookies to send, name → value. */
  cookies?: Record<string, string>;
  /** Sets Host: <tenant>.localhost. */
  tenant?: string;
}

/** A full app on its own database, with every log line it writes kept in `logs`. */
export function testApp(opts: TestAppOptions = {}) {
  const config: Config = loadConfig({}, { SUITE_DB: opts.db ?? ":memory:", SUITE_HASH_CONCURRENCY: "2", ...opts.env });
  const logs: Record<string, unknown>[] = [];
  const ctx = createContext({
    config,
    db: opts.db ? undefined : openDatabase(":memory:"),
    log: (line) => {
      logs.push(line);
      noteLog(line);
    },
    now: opts.now,
    limits: opts.limits,
    walSync: opts.walSync,
  });
  const app = createApp(ctx);
  // Mailed links are secrets too: note each one as it is written to the outbox. Every store that
  // writes mail looks enqueueInTx up on the mail store at call time, so wrapping it here sees them
  // all. The mail is found by its shape, not its position (a PostgreSQL enqueueInTx takes its
  // transaction first).
  const mailStore = ctx.repos.mail as unknown as { enqueueInTx: (...args: unknown[]) => unknown };
  const enqueue = mailStore.enqueueInTx;
  mailStore.enqueueInTx = (...args: unknown[]) => {
    const mail = args.find((a): a is { link: string | null } => typeof a === "object" && a !== null && "recipient" in a && "link" in a);
    if (mail?.link) noteSecret("mailed link", mail.link);
    return enqueue(...args);
  };

  async function request(method: string, path: string, o: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { ...o.headers };
    let body: string | Uint8Array | undefined = o.raw;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers["content-type"] ??= "application/json";
    }
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.cookies) headers.cookie = Object.entries(o.cookies).map(([k, v]) => `${k}=${v}`).join("; ");
    if (o.tenant) headers.host = `${o.tenant}.localhost`;
    noteHeaders(headers);
    if (o.body !== undefined) noteRequestSecrets(o.body);
    const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
    noteHeaders(res.headers);
    if (res.headers.get("content-type")?.includes("json")) noteResponseSecrets(await res.clone().json().catch(() => null));
    // Let onAfterResponse (the access log) run before the caller looks at the logs.
    await Bun.sleep(0);
    return res;
  }

  const json = async (method: string, path: string, o: RequestOptions = {}) => {
    const res = await request(method, path, o);
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null, res };
  };

  /** Signs up a new organization; answers its tokens, user and tenant. */
  async function signup(subdomain = `t${Math.random().toString(36).slice(2, 8)}`, extra: Record<string, unknown> = {}) {
    const input = { email: `admin@${subdomain}.test`, password: "correct horse battery", tenant_name: `Org ${subdomain}`, subdomain, ...extra };
    const r = await json("POST", "/api/v1/auth/signup", { body: input });
    if (r.status !== 201) throw new Error(`signup failed: ${r.status} ${JSON.stringify(r.body)}`);
    return { ...r.body, password: input.password, email: input.email, subdomain } as {
      tenant: { id: string; subdomain: string; modules: string[] };
      user: { id: string; email: string; role: string; profile_id: string };
      access_token: string;
      refresh_token: string;
      password: string;
      email: string;
      subdomain: string;
    };
  }

  return { app, ctx, config, logs, request, json, signup, close: () => ctx.close() };
}

export type TestApp = ReturnType<typeof testApp>;

/**
 * The SQLite stores under a test app, with their synchronous `…InTx` helpers: a test seam (the
 * stores' interfaces do not carry them), like ctx.db.
 */
export const sqliteRepos = (ctx: Context): SqliteStores => ctx.repos as unknown as SqliteStores;

/** The Set-Cookie headers of a response, by cookie name, with their attributes. */
export function setCookies(res: Response): Record<string, { value: string; attrs: Record<string, string | true> }> {
  const out: Record<string, { value: string; attrs: Record<string, string | true> }> = {};
  for (const line of res.headers.getSetCookie()) {
    const [pair, ...rest] = line.split(";").map((s) => s.trim());
    const eq = pair!.indexOf("=");
    const attrs: Record<string, string | true> = {};
    for (const a of rest) {
      const i = a.indexOf("=");
      if (i === -1) attrs[a.toLowerCase()] = true;
      else attrs[a.slice(0, i).toLowerCase()] = a.slice(i + 1);
    }
    out[pair!.slice(0, eq)] = { value: pair!.slice(eq + 1), attrs };
  }
  return out;
}

/** Headers a same-site browser page sends with a cookie-authenticated write. */
export const browserHeaders = (origin = "http://localhost:8000") => ({ "content-type": "application/json", origin, "sec-fetch-site": "same-origin" });
