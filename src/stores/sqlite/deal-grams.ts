import type { Db } from "../../db/database";

/**
 * deal_gram_counts (schema version 11) added up in memory while a bulk seed writes deals with the
 * triggers dropped, then written in one upsert per (stage, assignee, gram): the same counts the
 * triggers keep (each distinct 1-, 2- and 3-character piece of a deal's search text once, none
 * holding the newline between its parts; 3-character pieces since version 12), at a few
 * microseconds a deal instead of a hundred and more row writes. Grams are numbered as first met,
 * keyed by their code points (a 3-character piece by its first two's number and its last code
 * point, which keeps the key a safe integer), so no substring is made twice.
 */
export class GramTally {
  private readonly ids = new Map<number, number>();
  private readonly threes = new Map<number, number>();
  private readonly grams: string[] = [];
  /** The last deal (1-based) that counted each gram: a deal counts a gram once. */
  private seen = new Int32Array(4096);
  private readonly groups = new Map<string, Int32Array>();
  private deal = 0;

  private idOf(key: number, gram: () => string, ids = this.ids): number {
    let id = ids.get(key);
    if (id === undefined) {
      id = this.grams.length;
      ids.set(key, id);
      this.grams.push(gram());
      if (id >= this.seen.length) {
        const grown = new Int32Array(this.seen.length * 2);
        grown.set(this.seen);
        this.seen = grown;
      }
    }
    return id;
  }

  /** Counts one deal's grams under its stage and assignee (null: nobody). */
  add(stage: string, assignee: string | null, text: string): void {
    const group = `${stage}\n${assignee ?? ""}`;
    let counts = this.groups.get(group);
    const deal = ++this.deal;
    let prev = -1;
    let prevTwo = -1;
    for (let i = 0; i < text.length; ) {
      const c = text.codePointAt(i)!;
      i += c > 0xffff ? 2 : 1;
      if (c === 10) {
        prev = -1;
        prevTwo = -1;
        continue;
      }
      const one = this.idOf(c, () => String.fromCodePoint(c));
      const two = prev < 0 ? -1 : this.idOf(0x110000 + prev * 0x110000 + c, () => String.fromCodePoint(prev, c));
      const first = prevTwo;
      const three = first < 0 ? -1 : this.idOf(first * 0x110000 + c, () => this.grams[first]! + String.fromCodePoint(c), this.threes);
      if (!counts || counts.length < this.grams.length) {
        const grown = new Int32Array(Math.max(256, this.grams.length * 2));
        if (counts) grown.set(counts);
        counts = grown;
        this.groups.set(group, counts);
      }
      if (this.seen[one] !== deal) {
        this.seen[one] = deal;
        counts[one]!++;
      }
      if (two >= 0 && this.seen[two] !== deal) {
        this.seen[two] = deal;
        counts[two]!++;
      }
      if (three >= 0 && this.seen[three] !== deal) {
        this.seen[three] = deal;
        counts[three]!++;
      }
      prev = c;
      prevTwo = two;
    }
  }

  /** Adds the tally to the tenant's rows (deals already there were counted by the triggers). */
  write(db: Db, tenantId: string): void {
    const upsert = db.prepare(
      `INSERT INTO deal_gram_counts (tenant_id, gram, stage, assignee, n) VALUES (?1, ?2, ?3, ?4, ?5)
       ON CONFLICT (tenant_id, gram, stage, assignee) DO UPDATE SET n = n + excluded.n`,
    );
    for (const [group, counts] of this.groups) {
      const [stage, assignee] = group.split("\n") as [string, string];
      for (let id = 0; id < counts.length && id < this.grams.length; id++) if (counts[id]! > 0) upsert.run(tenantId, this.grams[id]!, stage, assignee, counts[id]!);
    }
  }
}
