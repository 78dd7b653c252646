// The benches' statistics: one definition of a percentile, so every bench's p50/p99 means the
// same thing and figures stay comparable from one bench (and one README entry) to the next.

/** Ascending copy of `xs` (the input is left alone). */
export const sorted = (xs: readonly number[]): number[] => [...xs].sort((a, b) => a - b);

/**
 * The sample at quantile `q` (0..1) of an ascending list: the element at index floor(q × n),
 * clamped to the last one (the definition the deal-list bench has reported since its first run);
 * NaN when the list is empty.
 */
export function quantile(ascending: readonly number[], q: number): number {
  if (ascending.length === 0) return Number.NaN;
  return ascending[Math.min(ascending.length - 1, Math.floor(q * ascending.length))]!;
}

/** quantile() of an unsorted list. */
export const percentile = (xs: readonly number[], q: number): number => quantile(sorted(xs), q);

export const median = (xs: readonly number[]): number => percentile(xs, 0.5);

export const mean = (xs: readonly number[]): number => (xs.length === 0 ? Number.NaN : xs.reduce((s, x) => s + x, 0) / xs.length);

export interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}

/** The usual figures of a list of times, in one sort. */
export function summarize(xs: readonly number[]): Summary {
  const s = sorted(xs);
  return { n: s.length, p50: quantile(s, 0.5), p90: quantile(s, 0.9), p99: quantile(s, 0.99), p999: quantile(s, 0.999), max: s.at(-1) ?? Number.NaN, mean: mean(s) };
}

/** A figure for a table: `digits` decimals, "-" for a missing one (NaN or null). */
export const fixed = (v: number | null | undefined, digits = 2): string => (v === null || v === undefined || Number.isNaN(v) ? "-" : v.toFixed(digits));

/** fixed(), right-aligned in `width` characters. */
export const cell = (v: number | null | undefined, width: number, digits = 2): string => fixed(v, digits).padStart(width);
