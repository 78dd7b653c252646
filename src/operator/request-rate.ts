import { SIGN_IN_ROUTES, signInResult } from "../metrics/recorder";

/** Minutes the overview's requests chart covers, and hours its hourly figures do. */
const MINUTES = 24 * 60;
const HOURS = 24;
/** Upper bounds (ms) of the latency buckets an hour's p99 is read from; the last is "slower". */
const BOUNDS_MS = [1, 2, 3, 5, 7.5, 10, 15, 20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 2000, 5000, 10000];
const NB = BOUNDS_MS.length + 1;

/** One hour of this instance's requests, as the overview shows it. */
export interface HourFigures {
  /** The hour's start, ms since the epoch. */
  start: number;
  requests: number;
  /** Answers with a 5xx status. */
  errors: number;
  /** The 99th percentile's bucket bound in ms (an upper bound: at most that); null without requests; over 10 s: 10000+. */
  p99_ms: number | null;
  /** Sign-in steps that passed, and those refused for a wrong proof (the metrics' `success` and `failure`). */
  sign_ins: number;
  sign_in_failures: number;
}

/**
 * This instance's traffic over the last 24 hours, in memory: requests per minute (a ring of
 * 1,440 counters) and, per hour, requests, 5xx answers, sign-ins and failures, and a latency
 * histogram of 22 buckets for the p99 (24 rings of counters, 2.5 KB in all). One add per request
 * is a few array writes. Per instance and lost on restart, as the overview says: it shows the
 * load's shape, not an account of it (Prometheus, with the same route-template counting, keeps that).
 */
export function createRequestRate(now: () => number) {
  const counts = new Uint32Array(MINUTES);
  /** The minute the ring's newest slot stands for. */
  let newest = Math.floor(now() / 60_000);
  // Per hour: requests, errors, sign-ins, failures; and the latency buckets.
  const hourly = new Uint32Array(HOURS * 4);
  const latency = new Uint32Array(HOURS * NB);
  let newestHour = Math.floor(now() / 3_600_000);

  /** Moves the ring forward to `minute`, zeroing the slots of the minutes in between. */
  const advance = (minute: number) => {
    if (minute <= newest) return;
    const steps = Math.min(minute - newest, MINUTES);
    for (let i = 1; i <= steps; i++) counts[(newest + i) % MINUTES] = 0;
    newest = minute;
  };
  const advanceHour = (hour: number) => {
    if (hour <= newestHour) return;
    const steps = Math.min(hour - newestHour, HOURS);
    for (let i = 1; i <= steps; i++) {
      const h = (newestHour + i) % HOURS;
      hourly.fill(0, h * 4, h * 4 + 4);
      latency.fill(0, h * NB, h * NB + NB);
    }
    newestHour = hour;
  };

  return {
    /** One answered request: its status, seconds, and route template and method (a sign-in step counts as one). */
    add(status = 200, seconds = 0, route = "", method = "GET"): void {
      const t = now();
      const minute = Math.floor(t / 60_000);
      advance(minute);
      if (minute > newest - MINUTES) counts[minute % MINUTES]!++;
      const hour = Math.floor(t / 3_600_000);
      advanceHour(hour);
      if (hour <= newestHour - HOURS) return;
      const h = hour % HOURS;
      hourly[h * 4]!++;
      if (status >= 500) hourly[h * 4 + 1]!++;
      if (method === "POST" && SIGN_IN_ROUTES[route]) {
        const result = signInResult(status);
        if (result === "success") hourly[h * 4 + 2]!++;
        else if (result === "failure") hourly[h * 4 + 3]!++;
      }
      const ms = seconds * 1000;
      let b = 0;
      while (b < BOUNDS_MS.length && ms > BOUNDS_MS[b]!) b++;
      latency[h * NB + b]!++;
    },
    /** The last `minutes` minutes' counts, oldest first, the current minute last. */
    series(minutes = MINUTES): number[] {
      advance(Math.floor(now() / 60_000));
      const n = Math.min(Math.max(1, minutes), MINUTES);
      const out: number[] = [];
      for (let m = newest - n + 1; m <= newest; m++) out.push(counts[((m % MINUTES) + MINUTES) % MINUTES]!);
      return out;
    },
    /** The last 24 hours, oldest first, the current hour last. */
    hours(): HourFigures[] {
      advanceHour(Math.floor(now() / 3_600_000));
      const out: HourFigures[] = [];
      for (let hour = newestHour - HOURS + 1; hour <= newestHour; hour++) {
        const h = ((hour % HOURS) + HOURS) % HOURS;
        const requests = hourly[h * 4]!;
        let p99: number | null = null;
        if (requests > 0) {
          const rank = Math.ceil(requests * 0.99);
          let seen = 0;
          for (let b = 0; b < NB; b++) {
            seen += latency[h * NB + b]!;
            if (seen >= rank) {
              p99 = BOUNDS_MS[Math.min(b, BOUNDS_MS.length - 1)]!;
              break;
            }
          }
        }
        out.push({ start: hour * 3_600_000, requests, errors: hourly[h * 4 + 1]!, p99_ms: p99, sign_ins: hourly[h * 4 + 2]!, sign_in_failures: hourly[h * 4 + 3]! });
      }
      return out;
    },
  };
}

export type RequestRate = ReturnType<typeof createRequestRate>;
