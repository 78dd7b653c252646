// The figures of `bun run bench neighbours`: B's operations per phase of A's work, judged against
// the targets, and the server's stall warnings summed up.
import { fixed, quantile } from "./stats";

/** One of B's operations: its start (epoch ms), its time and its status (0: no answer). */
export interface Op {
  t: number;
  op: string;
  ms: number;
  status: number;
}
export interface Phase {
  name: string;
  start: number;
  end: number;
  detail: string;
}

const f = (n: number) => fixed(n, 1);

/**
 * Prints a table (operation × phase: count, p50, p99, max, errors) and whether every phase met
 * the targets: p99 ≤ 2 × the quiet p99 + 20 ms, max ≤ 250 ms, no error. An error is any status
 * but 2xx (B's requests are all valid), or no answer within 30 s.
 */
export function judge(ops: Op[], phases: Phase[], say: (s: string) => void): boolean {
  const names = [...new Set(ops.map((o) => o.op))];
  const quiet = phases[0]!;
  // An operation belongs to every phase its time overlaps: one that waited through a whole job
  // (started before it, answered after it) is that job's doing too.
  const inPhase = (p: Phase, op: string) => ops.filter((o) => o.op === op && o.t < p.end && o.t + o.ms >= p.start);
  let ok = true;
  say(`${"operation".padEnd(12)} ${"phase".padEnd(28)} ${"n".padStart(5)} ${"p50".padStart(7)} ${"p99".padStart(7)} ${"max".padStart(7)} ${"errors".padStart(6)}  target`);
  for (const op of names) {
    const quietSorted = inPhase(quiet, op).map((o) => o.ms).sort((x, y) => x - y);
    const bound = 2 * quantile(quietSorted, 0.99) + 20;
    for (const p of phases) {
      const got = inPhase(p, op);
      const ms = got.map((o) => o.ms).sort((x, y) => x - y);
      const failed = got.filter((o) => o.status < 200 || o.status > 299);
      const errors = failed.length;
      const [p50, p99, max] = [quantile(ms, 0.5), quantile(ms, 0.99), ms.at(-1) ?? NaN];
      const met = got.length > 0 && (p === quiet ? max <= 250 && errors === 0 : p99 <= bound && max <= 250 && errors === 0);
      if (!met) ok = false;
      const target = p === quiet ? "max ≤ 250" : `p99 ≤ ${bound.toFixed(1)}, max ≤ 250`;
      say(`${op.padEnd(12)} ${p.name.padEnd(28)} ${String(got.length).padStart(5)} ${f(p50).padStart(7)} ${f(p99).padStart(7)} ${f(max).padStart(7)} ${String(errors).padStart(6)}  ${target}: ${met ? "met" : "MISSED"}${errors ? ` (statuses ${[...new Set(failed.map((o) => o.status))].join(", ")})` : ""}`);
    }
  }
  return ok;
}

/** The server's warning lines summed up: how many, and the longest figure each kind named. */
export function stallWarnings(lines: string[]): string {
  if (lines.length === 0) return "stall warnings: none (no event-loop delay or writer hold passed its limit)";
  // The stall monitor's lines: {"msg":"stall","kind":"event_loop"|"write_hold","ms":…,"work":"…"}.
  const longest = new Map<string, { ms: number; where: string }>();
  for (const line of lines) {
    let w: Record<string, unknown>;
    try {
      w = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (typeof w.ms !== "number") continue;
    const kind = String(w.kind ?? w.msg ?? "warning");
    if (w.ms > (longest.get(kind)?.ms ?? -1)) longest.set(kind, { ms: w.ms, where: String(w.work ?? w.route ?? "") });
  }
  const parts = [...longest].map(([k, v]) => `${k} ${v.ms.toFixed(1)} (${v.where})`);
  return `stall warnings: ${lines.length}; longest: ${parts.join("; ") || "no figure"}`;
}

/**
 * The stall warnings of each phase (by the line's time): how many, and the longest event-loop
 * delay and writer hold with the work they named, so a phase's figures say which work held the
 * server then.
 */
export function stallsByPhase(lines: string[], phases: Phase[]): string[] {
  const out: string[] = [];
  for (const p of phases) {
    const longest = new Map<string, { ms: number; where: string }>();
    const byWork = new Map<string, number>();
    let n = 0;
    for (const line of lines) {
      let w: Record<string, unknown>;
      try {
        w = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      const at = Date.parse(String(w.time ?? ""));
      if (typeof w.ms !== "number" || !(at >= p.start && at <= p.end)) continue;
      n++;
      const kind = String(w.kind ?? "warning");
      if (w.ms > (longest.get(kind)?.ms ?? -1)) longest.set(kind, { ms: w.ms, where: String(w.work ?? "") });
      const what = `${kind} in ${String(w.work ?? "?")}`;
      byWork.set(what, (byWork.get(what) ?? 0) + 1);
    }
    const parts = [...longest].map(([k, v]) => `${k} ${v.ms.toFixed(1)} (${v.where})`);
    out.push(`  ${p.name}: ${n} stall warnings${parts.length ? `; longest ${parts.join("; ")}` : ""}`);
    // Which work the warnings named, most often first: a phase's cause, not only its worst moment.
    if (byWork.size > 0) out.push(`    ${[...byWork].sort((a, b) => b[1] - a[1]).map(([what, k]) => `${what}: ${k}`).join(", ")}`);
  }
  return out;
}
