import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The always-on stall monitor (issue 27): how long the JavaScript thread was held (event-loop
 * delay, by a timer's lateness) and how long a SQLite write transaction held the writer (BEGIN
 * IMMEDIATE to COMMIT, timed in writeTx). Over STALL_LIMIT_MS, one JSON warning line names the
 * work that held it: the request's method and route template, or a job's name. The figures (with
 * the WAL's size and checkpoint lag, reported by the checkpointer's thread) are read through
 * stallFigures() by the bench and, later, a metrics endpoint.
 *
 * The work under way is an AsyncLocalStorage store set when a request arrives (http/core.ts) or a
 * job runs (runAs): it follows the request's awaits, so a write is named after the request whose
 * code opened it, not after whichever request arrived last.
 */

export const STALL_LIMIT_MS = 50;

type Log = (line: Record<string, unknown>) => void;
interface Work {
  label: string;
}

const work = new AsyncLocalStorage<Work>();
let log: Log | null = null;
/** The last work seen holding the thread: a late timer cannot ask what ran before it. */
let lastSeen = "idle";

export interface WalFigures {
  /** Bytes of the -wal file at the last look. */
  walBytes: number;
  /** Frames in the WAL not yet copied into the database (the last PASSIVE checkpoint's log − checkpointed). */
  checkpointLagFrames: number;
  /** Milliseconds since the WAL was last wholly checkpointed (0 when it is now). */
  checkpointLagMs: number;
  /** Largest -wal file seen since start, bytes. */
  maxWalBytes: number;
}

const figures = {
  maxLoopDelayMs: 0,
  maxLoopDelayWork: null as string | null,
  maxWriteHoldMs: 0,
  maxWriteHoldWork: null as string | null,
  loopStalls: 0,
  writeStalls: 0,
  writeTransactions: 0,
};
let wal: WalFigures | null = null;

/** Where warnings go (the server's logger); none until the server sets it. */
export function setStallLog(to: Log | null): void {
  log = to;
}

/** Marks the rest of the current request's async chain as `label` (http/core.ts, on arrival). */
export function beginWork(label: string): void {
  lastSeen = label;
  work.enterWith({ label });
}

/**
 * Runs `fn` in a work context of its own. beginWork's enterWith changes the context of whatever
 * called into the request synchronously: under Bun.serve that is the server's native callback, but
 * a caller of app.handle in-process (tests, the bench) would find the request's context in its own
 * code after its await (measured: it made later tests in the file time out).
 */
export function isolateWork<T>(fn: () => T): T {
  return work.run({ label: "unknown" }, fn);
}

/** Names the current work more precisely once known (the route template after routing). */
export function nameWork(label: string): void {
  const w = work.getStore();
  if (w) w.label = label;
  lastSeen = label;
}

/** Runs a job's code (and everything it schedules) under its name. */
export function runAs<T>(label: string, fn: () => T): T {
  lastSeen = label;
  return work.run({ label }, fn);
}

const current = (): string => work.getStore()?.label ?? "unknown";

/** Called by writeTx with how long it held the writer. */
export function noteWriteHold(ms: number): void {
  figures.writeTransactions++;
  if (ms <= figures.maxWriteHoldMs && ms <= STALL_LIMIT_MS) return;
  const who = current();
  lastSeen = who;
  if (ms > figures.maxWriteHoldMs) {
    figures.maxWriteHoldMs = ms;
    figures.maxWriteHoldWork = who;
  }
  if (ms > STALL_LIMIT_MS) {
    figures.writeStalls++;
    warn({ kind: "write_hold", ms: round(ms), work: who });
  }
}

function noteLoopDelay(ms: number): void {
  if (ms > figures.maxLoopDelayMs) {
    figures.maxLoopDelayMs = ms;
    figures.maxLoopDelayWork = lastSeen;
  }
  if (ms > STALL_LIMIT_MS) {
    figures.loopStalls++;
    // The timer cannot see what held the thread: the last work seen starting or writing is named.
    warn({ kind: "event_loop", ms: round(ms), work: lastSeen });
  }
}

function warn(fields: Record<string, unknown>): void {
  try {
    log?.({ level: "warn", msg: "stall", limit_ms: STALL_LIMIT_MS, ...fields });
  } catch {
    // A logger failing must not take the work with it.
  }
}

const round = (ms: number) => Math.round(ms * 100) / 100;

/** The checkpointer's thread reports the WAL here. */
export function noteWal(f: WalFigures): void {
  wal = f;
}

/**
 * The process's one event-loop monitor: a 20 ms timer's lateness (a timer that fires late was kept
 * waiting by code holding the thread). It feeds both the stall warnings above and the metrics'
 * `suite_event_loop_delay_seconds` (loopWindow). About 50 wake-ups a second, each a few µs;
 * unref'd, so it keeps no process alive. Shared: the server and the metrics each start it, one
 * timer runs, and it stops when the last of them stops it.
 */
let monitor: { timer: ReturnType<typeof setInterval>; users: number } | null = null;
/** The lateness of each tick since the last loopWindow(), in ms: a ring of the latest 4,096 (80 s of ticks). */
const WINDOW = 4096;
const ticks = new Float64Array(WINDOW);
let tickCount = 0;
let windowMax = 0;

export function startLoopMonitor(everyMs = 20): () => void {
  if (!monitor) {
    let expected = performance.now() + everyMs;
    const timer = setInterval(() => {
      const now = performance.now();
      const late = Math.max(0, now - expected);
      expected = now + everyMs;
      ticks[tickCount++ % WINDOW] = late;
      if (late > windowMax) windowMax = late;
      if (late > 0) noteLoopDelay(late);
    }, everyMs);
    timer.unref();
    monitor = { timer, users: 0 };
  }
  monitor.users++;
  let stopped = false;
  return () => {
    if (stopped || !monitor) return;
    stopped = true;
    if (--monitor.users === 0) {
      clearInterval(monitor.timer);
      monitor = null;
    }
  };
}

/** The event-loop delay since the previous call (the metrics' scrape): p99 and max of the ticks' lateness in ms, then starts again. */
export function loopWindow(): { p99Ms: number; maxMs: number; ticks: number } {
  const n = Math.min(tickCount, WINDOW);
  const sorted = ticks.slice(0, n).sort();
  const p99Ms = n === 0 ? 0 : sorted[Math.min(n - 1, Math.ceil(n * 0.99) - 1)]!;
  const out = { p99Ms, maxMs: windowMax, ticks: tickCount };
  tickCount = 0;
  windowMax = 0;
  return out;
}

export interface StallFigures {
  maxLoopDelayMs: number;
  maxLoopDelayWork: string | null;
  maxWriteHoldMs: number;
  maxWriteHoldWork: string | null;
  loopStalls: number;
  writeStalls: number;
  writeTransactions: number;
  /** null until the checkpointer's thread has reported (PostgreSQL, an in-memory database, the first 200 ms). */
  wal: WalFigures | null;
}

/** The figures so far (maxima since start or the last reset). */
export function stallFigures(): StallFigures {
  return { ...figures, maxLoopDelayMs: round(figures.maxLoopDelayMs), maxWriteHoldMs: round(figures.maxWriteHoldMs), wal: wal && { ...wal } };
}

/** Starts the maxima again (the bench, between phases). */
export function resetStallFigures(): void {
  Object.assign(figures, { maxLoopDelayMs: 0, maxLoopDelayWork: null, maxWriteHoldMs: 0, maxWriteHoldWork: null, loopStalls: 0, writeStalls: 0, writeTransactions: 0 });
  if (wal) wal.maxWalBytes = wal.walBytes;
}
