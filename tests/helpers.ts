import { createApp } from "../src/app";
import { type Config, loadConfig } from "../src/config";
import { type Context, type ContextOptions, createContext } from "../src/context";
import type { SqliteStores } from "../src/stores/sqlite";
import { openDatabase } from "../src/db/database";
import { openPostgres } from "../src/stores/postgres/database";
import { openPostgresStores } from "../src/stores/postgres";
import { PG_MIGRATIONS } from "../src/stores/postgres/migrate";
import { schemaFiles } from "../src/stores/postgres/schema";
import type { SignupResponse } from "../src/organization/model";
import { noteHeaders, noteLog, noteRequestSecrets, noteResponseSecrets, noteSecret } from "./security/ledger";
import { answerShapes } from "./support/answer-shapes";
import type { Argon2 } from "../src/security/argon2-threads";
import { createPasswordHasher } from "../src/security/passwords";

export interface TestAppOptions {
  env?: Record<string, string>;
  /** A database file; default an in-memory one. */
  db?: string;
  now?: () => number;
  limits?: ContextOptions["limits"];
  /** Group commit, as the server runs it (needs `db`). */
  walSync?: ContextOptions["walSync"];
  /** "sqlite" runs this app on SQLite even in the PostgreSQL run (a copy-to-postgres source). */
  backend?: "sqlite";
  /** The outbound guard's resolver (names only the test knows), in place of the system's. */
  outbound?: ContextOptions["outbound"];
  /** How often live event streams send their heartbeat (and check their session); default 25 s. */
  eventsHeartbeatMs?: number;
  /** Webhook sender settings (short timeouts and backoff); the sender starts only when a test starts it. */
  webhooks?: ContextOptions["webhooks"];
  /** "production": argon2id at the shipped cost, for the tests about the hash itself (see TEST_ARGON2). */
  argon2?: "production";
}

/**
 * In-process apps hash at argon2id's lowest useful cost (1 MiB, one pass: 0.7 ms a hash against
 * 34 ms), so the hundreds of signups and sign-ins the tests make cost CPU for what they test, not
 * for the hash. Same algorithm and code path (Bun.password through the hasher's semaphore); the
 * shipped cost is checked by tests/security/passwords.test.ts (argon2: "production"),
 * tests/security/argon2-threads.test.ts and every spawned server and browser test.
 */
const TEST_ARGON2 = { algorithm: "argon2id", memoryCost: 1024, timeCost: 1 } as const;
const testArgon2: Argon2 = {
  hash: (password) => Bun.password.hash(password, TEST_ARGON2),
  verify: (password, hash) => Bun.password.verify(password, hash),
};

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

/**
 * Which backend test apps run on: SUITE_TEST_BACKEND=postgres (with SUITE_TEST_DATABASE_URL, as
 * scripts/test.ts sets them) gives every app a database of its own on that server; else SQLite.
 */
export const TEST_BACKEND: "sqlite" | "postgres" = process.env.SUITE_TEST_BACKEND === "postgres" ? "postgres" : "sqlite";
const PG_SERVER = TEST_BACKEND === "postgres" ? process.env.SUITE_TEST_DATABASE_URL || null : null;
if (TEST_BACKEND === "postgres" && !PG_SERVER) throw new Error("SUITE_TEST_BACKEND=postgres needs SUITE_TEST_DATABASE_URL");

const databaseUrl = (server: string, name: string) => {
  const u = new URL(server);
  u.pathname = `/${name}`;
  return u.toString();
};

/** Runs `sql` on the server's maintenance database, on a connection of its own. */
async function onServer(server: string, sql: string): Promise<void> {
  const admin = openPostgres(server, { max: 1 });
  try {
    await admin.unsafe(sql);
  } finally {
    await admin.close();
  }
}

/**
 * A migrated template database, made once per schema (its name carries the schema's hash) and
 * shared by every test process: each app's database is a copy of it (CREATE DATABASE … TEMPLATE),
 * several times cheaper than running the schema in each.
 */
let template: Promise<string> | null = null;
function migratedTemplate(server: string): Promise<string> {
  template ??= (async () => {
    await dropStale(server);
    const hash = new Bun.CryptoHasher("sha256").update([...schemaFiles().map((f) => f.sql), ...PG_MIGRATIONS.map((m) => m.sql)].join("\n")).digest("hex").slice(0, 16);
    const name = `suite_tpl_${hash}`;
    const admin = openPostgres(server, { max: 1 });
    try {
      // One process builds it; the others wait here, then find it (a session lock: held across statements).
      const reserved = await admin.sql.reserve();
      try {
        await reserved.unsafe("SELECT pg_advisory_lock(hashtextextended('suite-test-template', 0))");
        const [exists] = await reserved.unsafe("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
        if (!exists) {
          const building = `${name}_building`;
          await reserved.unsafe(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
          await reserved.unsafe(`CREATE DATABASE ${building}`);
          // The stores' own migration makes it, as a server's first start would.
          const made = openPostgresStores(loadConfig({}, { SUITE_DB: ":memory:" }), databaseUrl(server, building), { max: 1 });
          await made.stores.ping();
          await made.stores.close();
          await reserved.unsafe(`ALTER DATABASE ${building} RENAME TO ${name}`);
        }
        await reserved.unsafe("SELECT pg_advisory_unlock(hashtextextended('suite-test-template', 0))");
      } finally {
        reserved.release();
      }
    } finally {
      await admin.close();
    }
    return name;
  })();
  return template;
}

let databases = 0;

/**
 * Databases named after a SQLite file (`testApp({ db })`): a restart test opens a second app on
 * the same file, so on PostgreSQL the same database; they outlive close(). They, and the
 * databases of apps a test never closed, go when the next test process starts (below).
 */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** Drops the test databases of test processes that have ended (their names carry the pid). */
async function dropStale(server: string): Promise<void> {
  const admin = openPostgres(server, { max: 1 });
  try {
    const rows = await admin.unsafe<{ datname: string }>("SELECT datname FROM pg_database WHERE datname ~ '^[tf]_[0-9]+_'");
    for (const { datname } of rows) {
      const pid = Number(datname.split("_")[1]);
      if (pid !== process.pid && !alive(pid)) await admin.unsafe(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => {});
    }
  } finally {
    await admin.close();
  }
}

/** A copy of the template named `name`, unless one exists. */
async function copyTemplate(server: string, name: string, ifMissing: boolean): Promise<void> {
  const tpl = await migratedTemplate(server);
  try {
    await onServer(server, `CREATE DATABASE ${name} TEMPLATE ${tpl}`);
  } catch (e) {
    // 42P04: it exists already (an earlier app on the same file); 23505: another app on the same
    // file created it at the same moment (its CREATE committed before ours failed).
    const errno = (e as { errno?: string }).errno;
    if (!(ifMissing && (errno === "42P04" || errno === "23505"))) throw e;
  }
}

/** A full app on its own database, with every log line it writes kept in `logs`. */
export function testApp(opts: TestAppOptions = {}) {
  // The new-device mail is off unless a test turns it on (tests/auth/new-device/): every other test's
  // sign-ins would each add a mail to the outbox it reads. Spawned servers keep the default (on).
  const config: Config = loadConfig({}, { SUITE_DB: opts.db ?? ":memory:", SUITE_HASH_CONCURRENCY: "2", SUITE_NEW_DEVICE_MAIL: "false", ...opts.env });
  const logs: Record<string, unknown>[] = [];
  // PostgreSQL: a database of this app's own, copied from the template before its first query
  // (the stores' gate waits for it, so testApp stays synchronous), dropped by close().
  let dropDatabase: (() => Promise<void>) | null = null;
  let stores: ContextOptions["stores"];
  if (PG_SERVER && opts.backend !== "sqlite") {
    const server = PG_SERVER;
    const file = opts.db ? new Bun.CryptoHasher("sha256").update(opts.db).digest("hex").slice(0, 20) : null;
    const name = file ? `f_${process.pid}_${file}` : `t_${process.pid}_${Date.now().toString(36)}_${databases++}`;
    const created = copyTemplate(server, name, file !== null);
    const opened = openPostgresStores(config, databaseUrl(server, name), { max: 3, before: created });
    stores = { ...opened.stores, pg: opened.pg };
    if (!file) dropDatabase = () => onServer(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
  const ctx = createContext({
    config,
    stores,
    db: opts.db || stores ? undefined : openDatabase(":memory:"),
    log: (line) => {
      logs.push(line);
      noteLog(line);
    },
    now: opts.now,
    limits: opts.limits,
    walSync: opts.walSync,
    outbound: opts.outbound,
    eventsHeartbeatMs: opts.eventsHeartbeatMs,
    webhooks: opts.webhooks,
    hasher: opts.argon2 === "production" ? undefined : createPasswordHasher(config.hashConcurrency, testArgon2),
  });
  const app = createApp(ctx);
  const checkAnswer = answerShapes(app);
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
    if (res.headers.get("content-type")?.includes("json")) {
      const answer = await res.clone().json().catch(() => undefined);
      noteResponseSecrets(answer ?? null);
      // Every 2xx JSON answer matches its operation's schema in the app's OpenAPI document.
      if (answer !== undefined) checkAnswer(method, path, res.status, res.headers.get("content-type"), answer);
    }
    // Let onAfterResponse (the access log) run before the caller looks at the logs: it runs after
    // the answer, a turn or a few later (more when the handler awaited PostgreSQL), so wait for the
    // line naming this request (bounded: a request that logs nothing does not hang the test).
    const id = res.headers.get("x-request-id");
    for (let i = 0; i < 50; i++) {
      await Bun.sleep(0);
      if (!id || logs.some((l) => l.msg === "request" && l.request_id === id)) break;
    }
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
    return { ...(r.body as SignupResponse), password: input.password, email: input.email, subdomain };
  }

  const close = async () => {
    await ctx.close();
    await dropDatabase?.();
  };
  return { app, ctx, config, logs, request, json, signup, close };
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
