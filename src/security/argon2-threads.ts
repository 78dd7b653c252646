/**
 * argon2 on threads of our own. Bun.password's async calls run on Bun's one shared work pool,
 * the pool crypto.subtle also uses, so a login flood queued every JWT check (every
 * authenticated request) behind seconds of argon2. Each worker here runs one synchronous hash
 * at a time; the hasher's semaphore decides how many run at once.
 */

/** The argon2 primitive itself, at the parameters of ./passwords.ts (declared here, which implements it, so the two files import one way). */
export interface Argon2 {
  hash(password: string): Promise<string>;
  verify(password: string, hash: string): Promise<boolean>;
}

/**
 * Thread priorities. The first thread runs at nice 10: it always gets a share of a busy machine,
 * so sign-ins never stall. The others run under SCHED_IDLE: they take every idle moment of the
 * other cores, yet any ordinary thread that wakes (the event loop with a request) preempts them
 * at once (measured on 2 cores: two busy loops beside the deal list left its p99 at 1.35 ms under
 * SCHED_IDLE, against 5.3 ms at nice 0 and 1.0–1.3 ms with nothing beside it).
 */
export const STEADY_NICE = 10;
export const SCHED_IDLE = 5;

type Job = { op: "hash"; password: string; options: unknown } | { op: "verify"; password: string; hash: string };
type Pending = { resolve: (v: never) => void; reject: (e: Error) => void };

// The worker's whole source: inline, so the compiled executable needs no file beside it. Its
// first message sets its priority: on Linux both the nice value and the policy are per thread.
const WORKER_SOURCE = `
function lower(idle) {
  if (idle) {
    try {
      const { dlopen, ptr } = require("bun:ffi");
      const libc = dlopen("libc.so.6", { sched_setscheduler: { args: ["i32", "i32", "ptr"], returns: "i32" } });
      if (libc.symbols.sched_setscheduler(0, ${SCHED_IDLE}, ptr(new Int32Array(1))) === 0) return;
    } catch {}
  }
  try { require("node:os").setPriority(${STEADY_NICE}); } catch {}
}
self.onmessage = (event) => {
  if (event.data.lower !== undefined) return lower(event.data.lower === "idle");
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
  /** Under SCHED_IDLE; one lane at a time is not (the steady one). */
  idle: boolean;
  pending: Map<number, Pending>;
}

export function argon2Threads(count: number, options: unknown): Argon2 {
  let url: string | null = null;
  let nextId = 0;
  const lanes: Lane[] = [];

  function startLane(): Lane {
    url ??= URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "application/javascript" }));
    const idle = lanes.some((l) => !l.idle);
    const lane: Lane = { worker: new Worker(url), idle, pending: new Map() };
    lane.worker.postMessage({ lower: idle ? "idle" : "steady" });
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
    // The steady lane first: a lone sign-in goes to it, so it never waits for an idle core.
    if (idle) lanes.push(lane);
    else lanes.unshift(lane);
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
