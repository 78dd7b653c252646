/**
 * A throwaway PostgreSQL cluster for tests and benches: `initdb` into a temporary folder (as an
 * unprivileged user when run as root, since PostgreSQL refuses root), `pg_ctl start` on a free
 * loopback port, removed by stop(). From the command line:
 *   bun scripts/postgres-cluster.ts start   prints the URL (postgres://suite@127.0.0.1:PORT/postgres)
 *   bun scripts/postgres-cluster.ts stop    stops the one `start` left running
 * Needs Debian's postgresql package (15 or newer); .ci/run installs it when missing.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Cluster {
  url: string;
  dir: string;
  stop(): void;
}

/** The newest PostgreSQL's bin folder, or null when none is installed. */
export function postgresBin(): string | null {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).filter((v) => /^\d+$/.test(v) && Number(v) >= 15 && existsSync(join(root, v, "bin", "initdb")));
  versions.sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], "bin") : null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

const STATE = join(tmpdir(), "suite-postgres-cluster.json");

/**
 * Options for benches: `dir` keeps the cluster in that folder (made once, started again by the
 * next run, left in place by stop()), and `settings` are extra `-c name=value` server settings.
 */
export interface ClusterOptions {
  dir?: string;
  settings?: string[];
}

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const bin = postgresBin();
  if (!bin) throw new Error("PostgreSQL 15 or newer is not installed (Debian: apt-get install -y postgresql)");
  const kept = options.dir !== undefined;
  if (kept) mkdirSync(options.dir!, { recursive: true });
  const dir = kept ? options.dir! : mkdtempSync(join(tmpdir(), "suite-pg-"));
  const asRoot = process.getuid?.() === 0;
  // PostgreSQL will not run as root: the cluster belongs to `nobody` then.
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "nobody"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "nobody"]).toString().trim());
    chownSync(dir, uid, gid);
  }
  const run = (cmd: string, args: string[]) => {
    const argv = asRoot ? ["runuser", "-u", "nobody", "--", cmd, ...args] : [cmd, ...args];
    const r = spawnSync(argv[0]!, argv.slice(1), { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout}`);
  };
  const data = join(dir, "data");
  if (!existsSync(join(data, "PG_VERSION"))) run(join(bin, "initdb"), ["-D", data, "-U", "suite", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"]);
  const port = await freePort();
  // Test settings: no fsync (a lost test cluster is nothing), enough connections for many apps.
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=400 -c shared_buffers=128MB${(options.settings ?? []).map((x) => ` -c ${x}`).join("")}`;
  run(join(bin, "pg_ctl"), ["-D", data, "-o", opts, "-l", join(dir, "log"), "-w", "-t", "30", "start"]);
  const url = `postgres://suite@127.0.0.1:${port}/postgres`;
  const stop = () => {
    try {
      run(join(bin, "pg_ctl"), ["-D", data, "-m", kept ? "fast" : "immediate", "-w", "stop"]);
    } catch {
      // Already stopped.
    }
    if (!kept) rmSync(dir, { recursive: true, force: true });
  };
  return { url, dir, stop };
}

if (import.meta.main) {
  const cmd = process.argv[2];
  if (cmd === "start") {
    const c = await startCluster();
    writeFileSync(STATE, JSON.stringify({ dir: c.dir, url: c.url }));
    process.stdout.write(`${c.url}\n`);
  } else if (cmd === "stop") {
    if (!existsSync(STATE)) process.exit(0);
    const { dir } = JSON.parse(readFileSync(STATE, "utf8")) as { dir: string };
    const bin = postgresBin();
    if (bin && existsSync(join(dir, "data"))) {
      const argv = process.getuid?.() === 0 ? ["runuser", "-u", "nobody", "--", join(bin, "pg_ctl")] : [join(bin, "pg_ctl")];
      spawnSync(argv[0]!, [...argv.slice(1), "-D", join(dir, "data"), "-m", "immediate", "-w", "stop"]);
    }
    rmSync(dir, { recursive: true, force: true });
    rmSync(STATE, { force: true });
  } else {
    process.stderr.write("usage: bun scripts/postgres-cluster.ts start|stop\n");
    process.exit(2);
  }
}
