// What a bench needs around the server process: a free port, a readiness wait, a fresh build of
// dist/suite, and the memory figures Linux keeps for a process.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

export async function waitFor(url: string, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await Bun.sleep(100);
  }
  throw new Error(`${url} did not answer`);
}

function newestMtime(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(s.mtimeMs, ...readdirSync(path).map((f) => newestMtime(join(path, f))));
}

/** dist/suite, built first when it is missing or older than the source. */
export function freshBinary(root: string, say: (s: string) => void): string {
  const binary = join(root, "dist", "suite");
  if (!existsSync(binary) || statSync(binary).mtimeMs < Math.max(newestMtime(join(root, "src")), newestMtime(join(root, "web")), statSync(join(root, "schema.sql")).mtimeMs)) {
    say("building dist/suite...");
    const b = Bun.spawnSync([process.execPath, "run", "build"], { cwd: root, stdout: "inherit", stderr: "inherit" });
    if (b.exitCode !== 0) throw new Error("build failed");
  }
  return binary;
}

/** VmRSS (resident now) and VmHWM (the kernel's own peak of it), in KiB; zeros once the process is gone. */
export function memoryOf(pid: number): { rssKb: number; hwmKb: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
    return { rssKb: kb("VmRSS"), hwmKb: kb("VmHWM") };
  } catch {
    return { rssKb: 0, hwmKb: 0 };
  }
}

/** CPU seconds (user + system) a process has used, split by thread: its main thread, its Worker threads, the rest. */
export function cpuOf(pid: number): { main: number; workers: number; other: number; total: number } {
  const out = { main: 0, workers: 0, other: 0, total: 0 };
  const tick = 100; // USER_HZ on Linux
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const seconds = (Number(f[11]) + Number(f[12])) / tick;
      const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
      if (tid === String(pid)) out.main += seconds;
      else if (comm === "Worker") out.workers += seconds;
      else out.other += seconds;
      out.total += seconds;
    } catch {}
  }
  return out;
}

/**
 * For an in-process loop of requests: one turn of the event loop every 64 calls, as a server's loop
 * turns. A loop of awaits alone never leaves the microtask queue, so what each request leaves for
 * later (Elysia's after-response hooks, the access log) piles up: a Request, its headers and a timer
 * per request, a heap of gigabytes, and every later measurement slower (JSON of a page read 48 µs
 * instead of 6).
 */
export function eventLoopTurns(): () => Promise<void> | undefined {
  let calls = 0;
  return () => (++calls % 64 === 0 ? new Promise<void>((r) => setImmediate(r)) : undefined);
}

/** CPU seconds of a PostgreSQL cluster's processes (its postmaster and its children, live and ended): `dir` is the cluster's folder. */
export function clusterCpu(dir: string): number {
  const postmaster = Number(readFileSync(join(dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
  const fields = (pid: number | string) => readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ");
  const own = fields(postmaster);
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const f = fields(pid);
      if (Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]);
    } catch {}
  }
  return ticks / 100;
}
