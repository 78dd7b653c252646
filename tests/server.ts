import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { noteHeaders, noteLog, noteRequestSecrets, noteResponseSecrets } from "./security/ledger";

/**
 * A real `suite serve` process (from source) for the tests that need one: several processes on
 * one database, signals, crashes. Its output and every secret sent or received go to the
 * secrets ledger, like an in-process test app's.
 */

const BUN = process.execPath;
const MAIN = join(import.meta.dir, "..", "src", "main.ts");

export function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  const port = s.port!;
  s.stop(true);
  return port;
}

export interface CallOptions {
  body?: unknown;
  token?: string;
  tenant?: string;
  headers?: Record<string, string>;
}

export interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint: the tests read answers loosely.
  body: any;
  text: string;
}

/** `command`: what to run instead of the source (the e2e tests run the built binary, dist/suite). */
/** `suite serve`'s exit code for a port already taken (`suite help` lists it; src/cli/serve.ts). */
const EXIT_PORT_IN_USE = 69;

export async function startServer(db: string, env: Record<string, string> = {}, command: string[] = [BUN, MAIN], choosePort = freePort) {
  // The server runs in its database's folder, which may not exist yet (the server would make it).
  mkdirSync(dirname(db), { recursive: true });
  // freePort's port is free when chosen, not when the server binds it: another process's outgoing
  // connection (an instance's PostgreSQL pool takes ephemeral ports) can take it meanwhile, and the
  // server then exits 69. That is the test's race, not the server's fault, so a new port is tried.
  for (let attempt = 1; ; attempt++) {
    const port = choosePort();
    const p = spawnServer(db, env, command, port);
    const stdout = new Response(p.stdout).text().then((t) => (noteLog(t), t));
    const stderr = new Response(p.stderr).text().then((t) => (noteLog(t), t));
    const url = `http://127.0.0.1:${port}`;
    if (await answersHealth(p, url, stderr, attempt < 5)) return serverAt(url, p, stdout, stderr);
  }
}

function spawnServer(db: string, env: Record<string, string>, command: string[], port: number) {
  return Bun.spawn([...command, "serve"], {
    cwd: dirname(db),
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: dirname(db),
      SUITE_DB: db,
      SUITE_HOST: "127.0.0.1",
      SUITE_PORT: String(port),
      SUITE_HASH_CONCURRENCY: "2",
      ...env,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
}

/** True once /api/v1/health answers; false if the port was taken (and `retry`); throws otherwise. */
async function answersHealth(p: Bun.Subprocess, url: string, stderr: Promise<string>, retry: boolean): Promise<boolean> {
  // Up to a minute (a loaded 2-core machine starts slowly), and never go on with a server that is not up.
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (p.exitCode !== null) {
      if (p.exitCode === EXIT_PORT_IN_USE && retry) return false;
      throw new Error(`suite serve exited ${p.exitCode}: ${await stderr}`);
    }
    if ((await fetch(`${url}/api/v1/health`).catch(() => null))?.ok) return true;
    if (Date.now() > deadline) {
      p.kill("SIGKILL");
      throw new Error(`suite serve did not answer /api/v1/health within 60 s: ${await stderr}`);
    }
    await Bun.sleep(50);
  }
}

function serverAt(url: string, p: Bun.Subprocess<"ignore", "pipe", "pipe">, stdout: Promise<string>, stderr: Promise<string>) {
  async function call(method: string, path: string, o: CallOptions = {}): Promise<Answer> {
    const headers: Record<string, string> = { ...o.headers };
    if (o.body !== undefined) headers["content-type"] = "application/json";
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.tenant) headers["x-tenant"] = o.tenant;
    noteHeaders(headers);
    if (o.body !== undefined) noteRequestSecrets(o.body);
    const res = await fetch(`${url}${path}`, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
    const text = await res.text();
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    noteHeaders(res.headers);
    noteResponseSecrets(body);
    return { status: res.status, headers: res.headers, body, text };
  }

  return {
    url,
    process: p,
    call,
    /** SIGTERM, then the exit code and everything the server wrote. */
    async stop(): Promise<{ code: number; stdout: string; stderr: string }> {
      p.kill("SIGTERM");
      const code = await Promise.race([p.exited, Bun.sleep(15_000).then(() => -1)]);
      if (p.exitCode === null) p.kill("SIGKILL");
      return { code, stdout: await stdout, stderr: await stderr };
    },
    kill(): void {
      if (p.exitCode === null) p.kill("SIGKILL");
    },
  };
}

export type Server = Awaited<ReturnType<typeof startServer>>;
