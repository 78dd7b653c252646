import type { SummaryRow } from "./deals-query";
import type { PipelineStageRow } from "./repo";
import type { DealSummary, DealSummaryGroup, SummaryGroup } from "./model";

/** Exact cents as decimal text ("123450" → "1234.50"), for sums past 2^53. */
export const formatCentsText = (cents: string): string => {
  const c = BigInt(cents);
  return `${c / 100n}.${String(c % 100n).padStart(2, "0")}`;
};

/** What the unassigned deals' group is called. */
export const UNASSIGNED_LABEL = "Unassigned";

/**
 * The summary's groups from the stores' rows: every stage in pipeline order (empty ones with
 * count 0), or each assignee with deals by name and then the unassigned; sums by currency code.
 */
export function summaryGroups(groupBy: SummaryGroup, rows: SummaryRow[], stages: PipelineStageRow[]): DealSummary {
  const byKey = new Map<string | null, SummaryRow[]>();
  for (const r of rows) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r]);
  const group = (key: string | null, label: string): DealSummaryGroup => {
    const own = (byKey.get(key) ?? []).sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
    return { key, label, count: own.reduce((n, r) => n + r.n, 0), values: own.map((r) => ({ currency: r.currency, sum: formatCentsText(r.cents) })) };
  };
  const total = rows.reduce((n, r) => n + r.n, 0);
  if (groupBy === "stage") {
    const ordered = [...stages].sort((a, b) => a.position - b.position);
    return { groups: ordered.map((s) => group(s.key, s.name)), total };
  }
  const people = [...byKey.entries()]
    .filter(([key]) => key !== null)
    .map(([key, own]) => ({ key, label: own.find((r) => r.name)?.name ?? own.find((r) => r.email)?.email ?? "A former member" }))
    .sort((a, b) => a.label.localeCompare(b.label) || (a.key! < b.key! ? -1 : 1));
  return { groups: [...people.map((p) => group(p.key, p.label)), group(null, UNASSIGNED_LABEL)], total };
}
