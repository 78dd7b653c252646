/**
 * Several `suite serve` processes (bun src/main.ts serve) on ONE database, for the tests of issue
 * 19's "many instances, one truth": each on a free port, started together (so they also race to
 * migrate), each waited for until /api/v1/health answers, then reachable by index or round-robin,
 * and killable one at a time (SIGKILL: a crash; SIGTERM: a clean stop) or all at once.
 *
 * On PostgreSQL they share `databaseUrl`. They also share one folder and one SUITE_DB path, so
 * one `<db>.keys` file (created here before they start): tokens one instance signs, another
 * accepts, as behind a load balancer. Without `databaseUrl` they share that SQLite file instead.
 * Every process's output and every secret sent or received goes to the secrets ledger
 * (tests/server.ts), and so does the database URL's password.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createKeyFile, generateKeys, keyFileOf } from "../../src/security/key-file";
import { noteSecret } from "../security/ledger";
import { type Answer, type CallOptions, type Server, startServer } from "../server";

export interface StartInstancesOptions {
  /** postgres://… shared by every instance; null: a SQLite file in `dir`, shared likewise. */
  databaseUrl: string | null;
  /** More environment for every instance (limits, SMTP, …). */
  env?: Record<string, string>;
  /** The folder for the shared SUITE_DB path and key file; default a new temp folder, removed by close(). */
  dir?: string;
  /** What runs instead of the source (e.g. the built binary ["dist/suite"]). */
  command?: string[];
}

export interface Instance {
  index: number;
  url: string;
  server: Server;
  /** Whether it was killed or stopped (by this harness). */
  down: boolean;
}

export interface StopResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Instances {
  readonly instances: Instance[];
  /** Base URLs (http://127.0.0.1:PORT), by index. */
  urls(): string[];
  /** The live instances' base URLs. */
  liveUrls(): string[];
  /** A request to instance `i`, through tests/server.ts's call (secrets noted). */
  call(i: number, method: string, path: string, o?: CallOptions): Promise<Answer>;
  /** A request to the next live instance in turn: requests spread as a load balancer spreads them. */
  next(method: string, path: string, o?: CallOptions): Promise<Answer & { instance: number }>;
  /** SIGKILL (default: a crash, nothing flushed) or SIGTERM (a clean stop, waited for) to instance `i`. */
  kill(i: number, signal?: "SIGKILL" | "SIGTERM"): Promise<StopResult | null>;
  /** The same to every live instance, at once. */
  killAll(signal?: "SIGKILL" | "SIGTERM"): Promise<Array<StopResult | null>>;
  /** Starts a fresh process in slot `i` (after a kill), on a new port, with the same database and keys. */
  restart(i: number): Promise<Instance>;
  /** Kills whatever is still running (SIGKILL) and removes the folder if the harness made it. */
  close(): Promise<void>;
  /** The shared SUITE_DB path (its folder holds the key file). */
  readonly db: string;
}

/** Starts `n` instances at once and answers when every one answers /api/v1/health. */
export async function startInstances(n: number, opts: StartInstancesOptions): Promise<Instances> {
  const madeDir = !opts.dir;
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), "suite-instances-"));
  mkdirSync(dir, { recursive: true });
  const db = join(dir, "suite.db");
  // One set of keys for all, before any starts (the key file is race-safe too; this makes it certain).
  createKeyFile(keyFileOf(db), generateKeys());
  if (opts.databaseUrl) {
    const password = decodeURIComponent(new URL(opts.databaseUrl).password);
    if (password) noteSecret("database password", password);
  }
  const env = { ...(opts.databaseUrl ? { SUITE_DATABASE_URL: opts.databaseUrl } : {}), ...opts.env };
  const start = (index: number) => startServer(db, env, opts.command).then((server): Instance => ({ index, url: server.url, server, down: false }));

  const started = await Promise.allSettled(Array.from({ length: n }, (_, i) => start(i)));
  const failed = started.find((r) => r.status === "rejected") as PromiseRejectedResult | undefined;
  if (failed) {
    for (const r of started) if (r.status === "fulfilled") r.value.server.kill();
    if (madeDir) rmSync(dir, { recursive: true, force: true });
    throw failed.reason;
  }
  const instances = started.map((r) => (r as PromiseFulfilledResult<Instance>).value);
  let turn = 0;

  const stopOne = async (inst: Instance, signal: "SIGKILL" | "SIGTERM"): Promise<StopResult | null> => {
    if (inst.down) return null;
    inst.down = true;
    if (signal === "SIGTERM") return inst.server.stop();
    inst.server.kill();
    await inst.server.process.exited;
    return null;
  };

  return {
    instances,
    db,
    urls: () => instances.map((i) => i.url),
    liveUrls: () => instances.filter((i) => !i.down).map((i) => i.url),
    call: (i, method, path, o) => instances[i]!.server.call(method, path, o),
    async next(method, path, o) {
      const live = instances.filter((i) => !i.down);
      if (live.length === 0) throw new Error("no instance is running");
      const inst = live[turn++ % live.length]!;
      return { ...(await inst.server.call(method, path, o)), instance: inst.index };
    },
    kill: (i, signal = "SIGKILL") => stopOne(instances[i]!, signal),
    killAll: (signal = "SIGKILL") => Promise.all(instances.map((inst) => stopOne(inst, signal))),
    async restart(i) {
      const old = instances[i]!;
      if (!old.down) await stopOne(old, "SIGKILL");
      instances[i] = await start(i);
      return instances[i]!;
    },
    async close() {
      await Promise.all(instances.map((inst) => stopOne(inst, "SIGKILL")));
      if (madeDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
