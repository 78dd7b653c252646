/**
 * The board's arithmetic, kept exact: values and sums are decimal text with two places
 * ("1234.50"), added up as integer cents in BigInt (a column's sum can pass 2^53 cents).
 */
import type { Deal, DealSummary } from "../../api/client";

export type Group = DealSummary["groups"][number];

/** "1234.50" → 123450n (the API always answers two places). */
export const centsOf = (text: string): bigint => {
  const [whole, frac = ""] = text.split(".");
  return BigInt(whole || "0") * 100n + BigInt(frac.padEnd(2, "0").slice(0, 2));
};

/** 123450n → "1234.50". */
export const textOf = (cents: bigint): string => {
  const sign = cents < 0n ? "-" : "";
  const c = cents < 0n ? -cents : cents;
  return `${sign}${c / 100n}.${String(c % 100n).padStart(2, "0")}`;
};

/** A group with one deal more (+1) or less (-1): its count and its currency's sum; a sum back at zero deals goes. */
export function adjusted(g: Group, deal: Pick<Deal, "value" | "currency">, sign: 1 | -1): Group {
  const value = centsOf(deal.value ?? "0.00") * BigInt(sign);
  const count = Math.max(0, g.count + sign);
  const values = g.values.some((v) => v.currency === (deal.currency ?? "USD"))
    ? g.values.map((v) => (v.currency === (deal.currency ?? "USD") ? { ...v, sum: textOf(centsOf(v.sum) + value) } : v))
    : [...g.values, { currency: deal.currency ?? "USD", sum: textOf(value) }].sort((a, b) => (a.currency < b.currency ? -1 : 1));
  // A currency none of the group's deals hold any more is no longer listed (as the server answers).
  return { ...g, count, values: count === 0 ? [] : values };
}

/** The summary after a deal left one stage for another (the total stays). */
export function movedInSummary(s: DealSummary, deal: Pick<Deal, "value" | "currency">, from: string, to: string): DealSummary {
  return { ...s, groups: s.groups.map((g) => (g.key === from ? adjusted(g, deal, -1) : g.key === to ? adjusted(g, deal, 1) : g)) };
}
