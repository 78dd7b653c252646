/** Minutes the overview's chart covers. */
const MINUTES = 24 * 60;

/**
 * This instance's requests per minute over the last 24 hours: a ring of 1,440 counters in memory
 * (5.6 KB), one add per request. Per instance and lost on restart, as the chart says: it shows
 * the load's shape, not an account of it (Prometheus keeps that).
 */
export function createRequestRate(now: () => number) {
  const counts = new Uint32Array(MINUTES);
  /** The minute the ring's newest slot stands for. */
  let newest = Math.floor(now() / 60_000);

  /** Moves the ring forward to `minute`, zeroing the slots of the minutes in between. */
  const advance = (minute: number) => {
    if (minute <= newest) return;
    const steps = Math.min(minute - newest, MINUTES);
    for (let i = 1; i <= steps; i++) counts[(newest + i) % MINUTES] = 0;
    newest = minute;
  };

  return {
    add(): void {
      const minute = Math.floor(now() / 60_000);
      advance(minute);
      if (minute > newest - MINUTES) counts[minute % MINUTES]!++;
    },
    /** The last `minutes` minutes' counts, oldest first, the current minute last. */
    series(minutes = MINUTES): number[] {
      advance(Math.floor(now() / 60_000));
      const n = Math.min(Math.max(1, minutes), MINUTES);
      const out: number[] = [];
      for (let m = newest - n + 1; m <= newest; m++) out.push(counts[((m % MINUTES) + MINUTES) % MINUTES]!);
      return out;
    },
  };
}

export type RequestRate = ReturnType<typeof createRequestRate>;
