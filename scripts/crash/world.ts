// The crash test's world: its options, its one seeded random sequence, a real SMTP server that
// counts what each address received, a temp database, and the `suite serve` process of a round.
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { SMTPServer } from "smtp-server";
import { freePort } from "../../bench/process-support";
import { randomSource } from "../../src/crm/demo-data";

const ROOT = join(import.meta.dir, "..", "..");
const BINARY = join(ROOT, "dist", "suite");

export function fail(message: string): never {
  console.error(`crash-test: ${message}`);
  process.exit(1);
}

export function options() {
  const argv = process.argv.slice(2);
  const o = { source: false, postgres: false, binary: BINARY, rounds: 20, clients: 16, seed: Math.floor(Math.random() * 2 ** 31) };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--source") o.source = true;
    else if (a === "--postgres") o.postgres = true;
    else if (a === "--binary" && argv[i + 1]) o.binary = argv[++i]!;
    else if (a === "--rounds" || a === "--clients" || a === "--seed") {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < (a === "--seed" ? 0 : 1)) fail(`${a} expects a whole number${a === "--seed" ? "" : " of at least 1"}`);
      o[a.slice(2) as "rounds" | "clients" | "seed"] = v;
    } else fail(`unknown argument ${a} (use --source, --postgres, --binary FILE, --rounds N, --clients C, --seed S)`);
  }
  if (!o.source && !existsSync(o.binary)) fail(`no ${o.binary}: run \`bun run build\` first, or pass --source`);
  return o;
}

export type Options = ReturnType<typeof options>;

/** The whole run is one seeded sequence (the demo data's PRNG), printed so a failure can be replayed. */
export function seededRandom(seed: number) {
  const source = randomSource(`crash-test ${seed}`);
  return { random: source.next, pick: <T>(xs: T[]): T => source.pick(xs) };
}

/** An SMTP server that accepts everything and counts the messages each recipient received. */
export async function startMailSink() {
  const mails = new Map<string, number>();
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    disableReverseLookup: true,
    logger: false,
    onData(stream, session, done) {
      stream.on("data", () => {});
      stream.on("end", () => {
        for (const r of session.envelope.rcptTo) mails.set(r.address, (mails.get(r.address) ?? 0) + 1);
        done();
      });
    },
  });
  // A server killed mid-message resets its connection: expected here, and not worth a stack trace.
  smtp.on("error", () => {});
  await new Promise<void>((done) => smtp.listen(0, "127.0.0.1", done));
  return { mails, port: (smtp.server.address() as { port: number }).port, close: () => new Promise<void>((done) => smtp.close(done)) };
}

/** A fresh database directory, and a way to start `suite serve` on it and wait for /health. */
export async function serverWorld(opts: Options, smtpPort: number, extraEnv: Record<string, string> = {}) {
  const suite = opts.source ? [process.execPath, join(ROOT, "src", "main.ts")] : [resolve(opts.binary)];
  const dir = mkdtempSync(join(tmpdir(), "suite-crash-"));
  const dbFile = join(dir, "suite.db");
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir,
    SUITE_DB: dbFile,
    SUITE_HOST: "127.0.0.1",
    SUITE_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    SUITE_PUBLIC_URL: "http://localhost:8000",
    SUITE_HASH_CONCURRENCY: "2",
    SUITE_ACCESS_TTL: String(24 * 3600),
    ...extraEnv,
  };
  let serverNo = 0;
  async function startServer() {
    const port = await freePort();
    const log = join(dir, `server-${++serverNo}.log`);
    const started = performance.now();
    const proc = Bun.spawn([...suite, "serve", "--port", String(port)], { cwd: dir, env, stdout: Bun.file(log), stderr: Bun.file(`${log}.err`) });
    const base = `http://127.0.0.1:${port}/api/v1`;
    for (;;) {
      if (await fetch(`${base}/health`).then((r) => r.ok, () => false)) break;
      if (proc.exitCode !== null) fail(`the server exited with ${proc.exitCode} before answering /health; see ${log}.err`);
      if (performance.now() - started > 20_000) fail(`the server did not answer /health within 20 s; see ${log}`);
      await Bun.sleep(20);
    }
    return { proc, base, readyMs: performance.now() - started };
  }
  return { suite, dir, dbFile, env, startServer };
}
