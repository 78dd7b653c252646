import type { Db } from "./database";
import { writeGramRows } from "./deal-grams";
import { bucketOf, trigramsOf, writeKeyGramRows } from "./deal-key-grams";

/**
 * What a fold of the deal search's counters adds up (search-fold.ts a few rows at a time,
 * search-sweep.ts a burst of them): the pending rows' pieces, signed, by counter row.
 */

/** Rows a chunk holds at most: its tallies' rows are written sorted, so shared grams are written once. */
const CHUNK = 64;

export type Pending = {
  id: number;
  sign: number;
  stage: string;
  assigned_to: string | null;
  search_text: string;
  title_key: string;
  account_key: string;
  contact_key: string | null;
};

/**
 * The distinct pieces gramsOf makes, as keys made without a string each: a piece of code points
 * under 2^16 is a number (its length, then its code units, 16 bits each: under 2^50), any other its
 * text. `out` is cleared and filled (one Set for every text: a sweep adds up 100,000 texts).
 */
export function gramKeysOf(text: string, out: Set<number | string>): Set<number | string> {
  out.clear();
  let p2 = -1;
  let p1 = -1;
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    // No piece holds the newline between a search text's parts.
    if (c === 10) {
      p1 = p2 = -1;
      continue;
    }
    out.add(c < 0x10000 ? 1 + 4 * c : String.fromCodePoint(c));
    if (p1 >= 0) {
      out.add(p1 < 0x10000 && c < 0x10000 ? 2 + 4 * (p1 + 0x10000 * c) : String.fromCodePoint(p1, c));
      if (p2 >= 0) out.add(p2 < 0x10000 && p1 < 0x10000 && c < 0x10000 ? 3 + 4 * (p2 + 0x10000 * (p1 + 0x10000 * c)) : String.fromCodePoint(p2, p1, c));
    }
    p2 = p1;
    p1 = c;
  }
  return out;
}

/** A piece's text from its gramKeysOf key. */
export function gramOfKey(key: number | string): string {
  if (typeof key === "string") return key;
  const length = key % 4;
  let v = (key - length) / 4;
  let gram = "";
  for (let k = 0; k < length; k++) {
    const unit = v % 0x10000;
    gram += String.fromCharCode(unit);
    v = (v - unit) / 0x10000;
  }
  return gram;
}

/** The distinct 1-, 2- and 3-character pieces of a search text, none holding the newline between its parts (what GramTally counts): the definition gramKeysOf keeps to (its test compares the two). */
export function gramsOf(text: string): Set<string> {
  const out = new Set<string>();
  const cps = [...text];
  for (let i = 0; i < cps.length; i++) {
    if (cps[i] === "\n") continue;
    out.add(cps[i]!);
    if (i + 1 < cps.length && cps[i + 1] !== "\n") {
      out.add(cps[i]! + cps[i + 1]!);
      if (i + 2 < cps.length && cps[i + 2] !== "\n") out.add(cps[i]! + cps[i + 1]! + cps[i + 2]!);
    }
  }
  return out;
}

type CounterRow = [string, string, string, number];
/** Key-gram counter rows by their gram, then by the rest of their key (made once a row, not a piece). */
type Nested = Map<number | string, Map<string, CounterRow>>;

/**
 * Signed counter changes of pending rows, by counter row: Maps, cheap at a fold's few rows (the
 * seed's tallies set up a megabyte of tables each, which costs more than a chunk's rows). Gram
 * counters are counts by gram key (gramKeysOf), then by a number for the row's stage and
 * assignee: no string, array or object a piece. A sweep adds up 200,000 rows; with a key text and
 * a row array a piece the heap grew by 250 MB of garbage before it was collected.
 */
export class FoldTally {
  private readonly grams = new Map<number | string, Map<number, number>>();
  /** The (stage, assignee) pairs met, by their number in `grams`. */
  private readonly pairs: Array<[string, string]> = [];
  private readonly pairNo = new Map<string, number>();
  private readonly keys: Nested = new Map();
  private held = 0;
  /** gramKeysOf's Set, reused for every text. */
  private readonly pieces = new Set<number | string>();

  /** Counter rows held (a sweep hands them to its tally table past a bound). */
  get size(): number {
    return this.held;
  }

  /** The number of a (stage, assignee) pair (the stage's length first: no two pairs make one text). */
  private pair(stage: string, assignee: string): number {
    const k = `${stage.length},${stage}${assignee}`;
    let n = this.pairNo.get(k);
    if (n === undefined) {
      n = this.pairs.push([stage, assignee]) - 1;
      this.pairNo.set(k, n);
    }
    return n;
  }

  /** Adds `sign` to a gram counter; a change that cancels out leaves the Map. */
  private bumpGram(g: number | string, pair: number, sign: number): void {
    let inner = this.grams.get(g);
    if (!inner) this.grams.set(g, (inner = new Map()));
    const n = (inner.get(pair) ?? 0) + sign;
    if (n === 0) {
      inner.delete(pair);
      this.held--;
    } else {
      if (n === sign) this.held++;
      inner.set(pair, n);
    }
  }

  /** Adds `sign` to the key-gram counter row (a, b, c) found under `gram` and `rest`. */
  private bumpKey(gram: string, rest: string, a: string, b: string, c: string, sign: number): void {
    let inner = this.keys.get(gram);
    if (!inner) this.keys.set(gram, (inner = new Map()));
    const row = inner.get(rest);
    // A stage change's -1 and +1 rows share every key gram: they cancel and leave the Map.
    if (!row) {
      inner.set(rest, [a, b, c, sign]);
      this.held++;
    } else if ((row[3] += sign) === 0) {
      inner.delete(rest);
      this.held--;
    }
  }

  add(p: Pending): void {
    const pair = this.pair(p.stage, p.assigned_to ?? "");
    for (const g of gramKeysOf(p.search_text, this.pieces)) this.bumpGram(g, pair, p.sign);
    const trigrams = [...trigramsOf(p.search_text), ""];
    for (const [ord, key] of [["t", p.title_key], ["a", p.account_key], ["c", p.contact_key]] as const) {
      if (key === null) continue;
      const bucket = bucketOf(key);
      // ord is one letter: ord and bucket make one text for one pair.
      const rest = ord + bucket;
      for (const g of trigrams) this.bumpKey(g, rest, ord, g, bucket, p.sign);
    }
  }

  /**
   * Adds pending rows in id order. A deal's change that kept its text and keys (a stage or an
   * assignee set, a bulk change's shape) is a -1 row and the +1 row after it: their key grams
   * cancel and their grams differ only by stage and assignee, so the pair costs one text's grams
   * (a third of adding both rows, which a sweep of 200,000 rows spent 29 s of CPU on).
   */
  addAll(rows: readonly Pending[]): void {
    for (let i = 0; i < rows.length; i++) {
      const p = rows[i]!;
      const q = rows[i + 1];
      if (q && p.sign === -1 && q.sign === 1 && q.id === p.id + 1 && p.search_text === q.search_text && p.title_key === q.title_key && p.account_key === q.account_key && p.contact_key === q.contact_key) {
        const from = this.pair(p.stage, p.assigned_to ?? "");
        const to = this.pair(q.stage, q.assigned_to ?? "");
        for (const g of gramKeysOf(p.search_text, this.pieces)) {
          this.bumpGram(g, from, -1);
          this.bumpGram(g, to, 1);
        }
        i++;
      } else this.add(p);
    }
  }

  /** The gram counters' rows: gram, stage, assignee, change. */
  private gramRows(): CounterRow[] {
    const out: CounterRow[] = [];
    for (const [g, inner] of this.grams) {
      if (inner.size === 0) continue;
      const gram = gramOfKey(g);
      for (const [pair, n] of inner) out.push([gram, this.pairs[pair]![0], this.pairs[pair]![1], n]);
    }
    return out;
  }

  private keyRows(): CounterRow[] {
    const out: CounterRow[] = [];
    for (const inner of this.keys.values()) for (const r of inner.values()) out.push(r);
    return out;
  }

  /** addCounterRows' flat rows, sorted by their values (near the table's key order). */
  private static sorted(rows: CounterRow[]): Array<string | number> {
    rows.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : x[2] < y[2] ? -1 : x[2] > y[2] ? 1 : 0));
    return rows.flat();
  }

  /** Both kinds' flat rows in no order (a sweep's tally table sorts them). */
  flat(): { grams: Array<string | number>; keys: Array<string | number> } {
    return { grams: this.gramRows().flat(), keys: this.keyRows().flat() };
  }

  write(db: Db, tenantId: string): void {
    writeGramRows(db, tenantId, FoldTally.sorted(this.gramRows()));
    writeKeyGramRows(db, tenantId, FoldTally.sorted(this.keyRows()));
  }
}

/**
 * A fold step's next chunk: as many rows as fit in what is left of the budget at the step's pace,
 * and at most as many as it folded so far. A pace learnt from one row whose pages were cached
 * promised 64 rows whose pages were not (another process had committed meanwhile, so SQLite
 * dropped this connection's cache): a 347 ms step beside `suite seed`. Doubling keeps a step
 * within about twice its budget when rows turn slower (a row's text is bounded). Under 1: stop.
 */
export function nextChunkRows(folded: number, spentMs: number, budgetMs: number): number {
  return Math.min(CHUNK, folded, Math.floor(((budgetMs - spentMs) * folded) / Math.max(spentMs, 0.001)));
}
