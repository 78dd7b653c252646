/**
 * argon2 on threads of our own. Bun.password's async calls run on Bun's one shared work pool,
 * the pool crypto.subtle also uses, so a login flood queued every JWT check (every
 * authenticated request) behind seconds of argon2. Each worker here runs one synchronous hash
 * at a time; the hasher's semaphore decides how many run at once.
 */
import type { Argon2 } from "./passwords";

type Job = { op: "hash"; password: string; options: unknown } | { op: "verify"; password: string; hash: string };
type Pending = { resolve: (v: never) => void; reject: (e: Error) => void };

// The worker's whole source: inline, so the compiled executable needs no file beside it.
const WORKER_SOURCE = `
self.onmessage = (event) => {
  const { id, job } = event.data;
  try {
    const value = job.op === "hash" ? Bun.password.hashSync(job.password, job.options) : Bun.password.verifySync(job.password, job.hash);
    postMessage({ id, value });
  } catch (error) {
    postMessage({ id, error: String(error && error.message ? error.message : error) });
  }
};`;

interface Lane {
  worker: Worker;
  pending: Map<number, Pending>;
}

export function argon2Threads(count: number, options: unknown): Argon2 {
  let url: string | null = null;
  let nextId = 0;
  const lanes: Lane[] = [];

  function startLane(): Lane {
    url ??= URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "application/javascript" }));
    const lane: Lane = { worker: new Worker(url), pending: new Map() };
    // Idle threads must not keep a stopping server alive.
    lane.worker.unref();
    lane.worker.onmessage = (e: MessageEvent<{ id: number; value?: never; error?: string }>) => {
      const p = lane.pending.get(e.data.id);
      if (!p) return;
      lane.pending.delete(e.data.id);
      if (e.data.error !== undefined) p.reject(new Error(e.data.error));
      else p.resolve(e.data.value as never);
    };
    lane.worker.onerror = (e) => {
      // A dead thread fails its own jobs and is replaced on the next call.
      const at = lanes.indexOf(lane);
      if (at >= 0) lanes.splice(at, 1);
      for (const p of lane.pending.values()) p.reject(new Error(`argon2 thread failed: ${e.message}`));
      lane.pending.clear();
    };
    lanes.push(lane);
    return lane;
  }

  /** Threads start on first use; each job goes to the least busy one. */
  function run<T>(job: Job): Promise<T> {
    const idle = lanes.find((l) => l.pending.size === 0);
    const lane = idle ?? (lanes.length < count ? startLane() : lanes.reduce((a, b) => (b.pending.size < a.pending.size ? b : a)));
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      lane.pending.set(id, { resolve: resolve as (v: never) => void, reject });
      lane.worker.postMessage({ id, job });
    });
  }

  return {
    hash: (password) => run<string>({ op: "hash", password, options }),
    verify: (password, hash) => run<boolean>({ op: "verify", password, hash }),
  };
}
