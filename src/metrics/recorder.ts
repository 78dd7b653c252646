import { readdirSync } from "node:fs";
import { Counter, Gauge, Registry } from "prom-client";
import { loopWindow, startLoopMonitor } from "../db/stall-monitor";
import { createRequestMetrics } from "./request-metrics";

/**
 * The server's Prometheus metrics, one registry per process (each instance is scraped on its own).
 * Labels hold only route templates, methods, status classes, limit names and fixed words: never an
 * organization, a user, an address or a path with ids in it, so their number stays bounded.
 *
 * Recording a request is a Map lookup and a few array writes (request-metrics.ts; its cost:
 * `bun run bench metrics`).
 */
export function createMetrics(version: string) {
  const registry = new Registry();
  const registers = [registry];

  const requests = createRequestMetrics();
  for (const m of requests.metrics) registry.registerMetric(m as never);
  const signIns = new Counter({ name: "suite_sign_ins_total", help: "Sign-in attempts by method and result (success, failure, limited, refused)", labelNames: ["method", "result"], registers });
  const refusals = new Counter({ name: "suite_rate_limit_refusals_total", help: "Requests refused by a rate limit, by limit", labelNames: ["limit"], registers });
  const jobsEnded = new Counter({ name: "suite_jobs_finished_total", help: "Jobs that ended in this process, by kind and status (succeeded, failed)", labelNames: ["kind", "status"], registers });
  new Gauge({ name: "suite_build_info", help: "The running build; the value is always 1", labelNames: ["version"], registers }).set({ version }, 1);

  // Event-loop delay: how late the process's one loop monitor (db/stall-monitor.ts, whose 20 ms
  // timer also writes the stall warnings) ran its timer since the last scrape.
  const stopLoop = startLoopMonitor();
  new Gauge({
    name: "suite_event_loop_delay_seconds",
    help: "Event-loop delay since the previous scrape: quantile 0.99 and 1 (the longest)",
    labelNames: ["quantile"],
    registers,
    collect() {
      const w = loopWindow();
      this.set({ quantile: "0.99" }, w.p99Ms / 1000);
      this.set({ quantile: "1" }, w.maxMs / 1000);
    },
  });
  processMetrics(registers);

  return {
    registry,
    /** One answered request: its route template (not its path), method, status and seconds. */
    request(route: string, method: string, status: number, seconds: number): void {
      requests.record(route, METHODS.has(method) ? method : "OTHER", status, seconds);
      const signIn = SIGN_IN_ROUTES[route];
      if (signIn && method === "POST") signIns.inc({ method: signIn, result: signInResult(status) });
    },
    /** A rate limit said no. */
    refused(limit: string): void {
      refusals.inc({ limit });
    },
    /** A job ended here (kinds and statuses are fixed words). */
    jobEnded(kind: string, status: string): void {
      jobsEnded.inc({ kind, status });
    },
    /** A gauge whose value is read when Prometheus scrapes (the mail backlog, jobs, the database). */
    gauge(name: string, help: string, labelNames: string[], read: (set: (labels: Record<string, string>, value: number) => void) => Promise<void> | void): void {
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        async collect() {
          this.reset();
          await read((labels, value) => this.set(labels, value));
        },
      });
    },
    async text(): Promise<string> {
      return registry.metrics();
    },
    close(): void {
      stopLoop();
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/**
 * The routes that sign someone in (POST), and the method each stands for. An identity provider's
 * callback is left out: it always answers 302, so its status says nothing of the outcome.
 */
export const SIGN_IN_ROUTES: Record<string, string> = {
  "/api/v1/auth/login": "password",
  "/api/v1/auth/2fa/verify": "two_factor",
  "/api/v1/auth/magic-verify": "magic_link",
  "/api/v1/auth/passkeys/login/verify": "passkey",
};

/** 2xx: the step passed; 429: a limit held it back; 401 and 400: wrong proof; other 4xx: refused. */
export function signInResult(status: number): string {
  if (status >= 200 && status < 300) return "success";
  if (status === 429) return "limited";
  if (status === 401 || status === 400 || status === 422) return "failure";
  return status >= 500 ? "error" : "refused";
}

/**
 * CPU, memory, open files and connections of this process. prom-client's default collectors are
 * not used: under Bun their event-loop figures read NaN and 9.2e9 (measured), which is no metric.
 */
function processMetrics(registers: Registry[]): void {
  const started = Date.now() / 1000 - process.uptime();
  new Gauge({ name: "process_start_time_seconds", help: "When the process started, in seconds since the epoch", registers }).set(started);
  let counted = { user: 0, system: 0 };
  new Counter({
    name: "process_cpu_seconds_total",
    help: "CPU time the process has used, by mode (user, system)",
    labelNames: ["mode"],
    registers,
    collect() {
      const u = process.cpuUsage();
      this.inc({ mode: "user" }, Math.max(0, u.user / 1e6 - counted.user));
      this.inc({ mode: "system" }, Math.max(0, u.system / 1e6 - counted.system));
      counted = { user: u.user / 1e6, system: u.system / 1e6 };
    },
  });
  new Gauge({
    name: "process_resident_memory_bytes",
    help: "Resident memory of the process",
    registers,
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });
  new Gauge({
    name: "process_open_fds",
    help: "Open file descriptors (sockets included); 0 where /proc is not there",
    registers,
    collect() {
      try {
        this.set(readdirSync("/proc/self/fd").length);
      } catch {
        this.set(0);
      }
    },
  });
}
