import type { Db } from "./database";

/**
 * deal_gram_counts (schema version 11) added up in memory while a bulk seed writes deals with the
 * triggers dropped, then written in one upsert per (stage, assignee, gram): the same counts the
 * triggers keep (each distinct 1-, 2- and 3-character piece of a deal's search text once, none
 * holding the newline between its parts; 3-character pieces since version 12), at a few
 * microseconds a deal instead of a hundred and more row writes. Grams are numbered as first met,
 * a longer one by the number of its first part and of its last character, so no substring is made twice.
 */
export class GramTally {
  /** 1-character grams' numbers by code point (-1: not met yet); 2- and 3-character ones by (number of their first part, number of their last character), below. */
  private ones = new Int32Array(0x10000).fill(-1);
  private readonly astral = new Map<number, number>();
  /** Open addressing over (first, last) pairs: a Map of numbers cost about twice as much a character. */
  private firsts = new Int32Array(1 << 16).fill(-1);
  private lasts = new Int32Array(1 << 16);
  private longIds = new Int32Array(1 << 16);
  private longCount = 0;
  private readonly grams: string[] = [];
  /** The last deal (1-based) that counted each gram: a deal counts a gram once. */
  private seen = new Int32Array(4096);
  private readonly groups = new Map<string, Int32Array>();
  private deal = 0;

  private newId(gram: string): number {
    const id = this.grams.length;
    this.grams.push(gram);
    if (id >= this.seen.length) {
      const grown = new Int32Array(this.seen.length * 2);
      grown.set(this.seen);
      this.seen = grown;
    }
    return id;
  }

  private oneOf(c: number): number {
    if (c < 0x10000) {
      const id = this.ones[c]!;
      return id >= 0 ? id : (this.ones[c] = this.newId(String.fromCharCode(c)));
    }
    let id = this.astral.get(c);
    if (id === undefined) this.astral.set(c, (id = this.newId(String.fromCodePoint(c))));
    return id;
  }

  /** The gram `first` (a 1- or 2-character gram's number) followed by the character numbered `last`. */
  private longerOf(first: number, last: number): number {
    const mask = this.firsts.length - 1;
    let h = (Math.imul(first, 0x9e3779b1) ^ Math.imul(last, 0x85ebca77)) & mask;
    for (;;) {
      const f = this.firsts[h]!;
      if (f === first && this.lasts[h] === last) return this.longIds[h]!;
      if (f < 0) break;
      h = (h + 1) & mask;
    }
    const id = this.newId(this.grams[first]! + this.grams[last]!);
    this.firsts[h] = first;
    this.lasts[h] = last;
    this.longIds[h] = id;
    if (++this.longCount * 2 > this.firsts.length) this.growLonger();
    return id;
  }

  private growLonger(): void {
    const [firsts, lasts, ids] = [this.firsts, this.lasts, this.longIds];
    this.firsts = new Int32Array(firsts.length * 2).fill(-1);
    this.lasts = new Int32Array(firsts.length * 2);
    this.longIds = new Int32Array(firsts.length * 2);
    const mask = this.firsts.length - 1;
    for (let i = 0; i < firsts.length; i++) {
      if (firsts[i]! < 0) continue;
      let h = (Math.imul(firsts[i]!, 0x9e3779b1) ^ Math.imul(lasts[i]!, 0x85ebca77)) & mask;
      while (this.firsts[h]! >= 0) h = (h + 1) & mask;
      this.firsts[h] = firsts[i]!;
      this.lasts[h] = lasts[i]!;
      this.longIds[h] = ids[i]!;
    }
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
      const one = this.oneOf(c);
      const two = prev < 0 ? -1 : this.longerOf(prev, one);
      const three = prevTwo < 0 ? -1 : this.longerOf(prevTwo, one);
      if (!counts || counts.length < this.grams.length) {
        const grown = new Int32Array(Math.max(256, this.grams.length * 2));
        if (counts) grown.set(counts);
        counts = grown;
        this.groups.set(group, counts);
      }
      const seen = this.seen;
      if (seen[one] !== deal) {
        seen[one] = deal;
        counts[one]!++;
      }
      if (two >= 0 && seen[two] !== deal) {
        seen[two] = deal;
        counts[two]!++;
      }
      if (three >= 0 && seen[three] !== deal) {
        seen[three] = deal;
        counts[three]!++;
      }
      prev = one;
      prevTwo = two;
    }
  }

  /** How many rows write() writes (one per stage, assignee and gram met). */
  rows(): number {
    let n = 0;
    for (const counts of this.groups.values()) for (let id = 0; id < counts.length && id < this.grams.length; id++) if (counts[id]! > 0) n++;
    return n;
  }

  /**
   * The tally's rows in the table's key order (gram, stage, assignee), flat: gram, stage, assignee,
   * n, gram, … (plain values: a tally counted on another thread sends them back as they are).
   */
  sortedRows(): Array<string | number> {
    const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
    const groups = [...this.groups].map(([group, counts]) => ({ key: group.split("\n") as [string, string], counts }));
    groups.sort((a, b) => byBytes(a.key[0], b.key[0]) || byBytes(a.key[1], b.key[1]));
    const ids = this.grams.map((_, id) => id).sort((a, b) => byBytes(this.grams[a]!, this.grams[b]!));
    const out: Array<string | number> = [];
    for (const id of ids) for (const { key, counts } of groups) if (id < counts.length && counts[id]! > 0) out.push(this.grams[id]!, key[0], key[1], counts[id]!);
    return out;
  }

  /** Adds the tally to the tenant's rows (deals already there were counted by the triggers). */
  write(db: Db, tenantId: string): void {
    writeGramRows(db, tenantId, this.sortedRows());
  }
}

/** Adds sortedRows() to the tenant's deal_gram_counts (addCounterRows). */
export function writeGramRows(db: Db, tenantId: string, rows: ReadonlyArray<string | number>): void {
  addCounterRows(db, "deal_gram_counts", ["gram", "stage", "assignee"], tenantId, rows);
}

/** Rows an INSERT of addCounterRows holds. */
const BATCH = 200;

/**
 * Adds a tally's flat rows (three key values and a count, then the next row's) to a counter table
 * keyed by (tenant_id, the three `keys`), in the order given: the table's key order, so they are
 * appended to the end of the tree rather than spread over it, which matters at hundreds of
 * thousands of rows a tenant. BATCH rows a statement: a statement run from JS costs about as much
 * as the row it writes.
 */
export function addCounterRows(db: Db, table: string, keys: readonly [string, string, string], tenantId: string, rows: ReadonlyArray<string | number>): void {
  const columns = `tenant_id, ${keys.join(", ")}, n`;
  const onConflict = `ON CONFLICT (tenant_id, ${keys.join(", ")}) DO UPDATE SET n = n + excluded.n`;
  // db.query: prepared once per connection and kept (the search fold calls this for a few rows at a time).
  const one = db.query(`INSERT INTO ${table} (${columns}) VALUES (?1, ?2, ?3, ?4, ?5) ${onConflict}`);
  const many = db.query(`INSERT INTO ${table} (${columns}) VALUES ${Array.from({ length: BATCH }, () => "(?, ?, ?, ?, ?)").join(", ")} ${onConflict}`);
  const args: Array<string | number> = [];
  let i = 0;
  for (; i + BATCH * 4 <= rows.length; i += BATCH * 4) {
    args.length = 0;
    for (let k = i; k < i + BATCH * 4; k += 4) args.push(tenantId, rows[k]!, rows[k + 1]!, rows[k + 2]!, rows[k + 3]!);
    many.run(...args);
  }
  for (; i < rows.length; i += 4) one.run(tenantId, rows[i]!, rows[i + 1]!, rows[i + 2]!, rows[i + 3]!);
}

/**
 * A counter table counted anew from every deal (a schema migration's backfill, inside its
 * transaction): one read of the deals in rowid order, which keeps each organization's deals
 * together (their seq is a range of their own), and a tally's sorted upserts, flushed whenever the
 * organization changes (an upsert adds, so a tenant met twice still counts right). `columns` are
 * what `add` reads besides tenant_id.
 */
export function recountByTenant<D extends { tenant_id: string }, T extends { write(db: Db, tenantId: string): void }>(
  db: Db,
  columns: string,
  newTally: () => T,
  add: (tally: T, deal: D) => void,
): void {
  let tenant: string | null = null;
  let tally = newTally();
  for (const d of db.query(`SELECT tenant_id, ${columns} FROM deals ORDER BY seq`).iterate() as IterableIterator<D>) {
    if (d.tenant_id !== tenant) {
      if (tenant !== null) tally.write(db, tenant);
      [tenant, tally] = [d.tenant_id, newTally()];
    }
    add(tally, d);
  }
  if (tenant !== null) tally.write(db, tenant);
}

/**
 * deal_gram_counts counted anew from every deal's search text (migration 12's backfill). Instead
 * of a trigger's hundred upserts a deal spread over the table: 25 minutes and 18 GB of writes for
 * 1.9M deals (migration 12 as first written).
 */
export function recountDealGrams(db: Db): void {
  db.run("DELETE FROM deal_gram_counts");
  recountByTenant<{ tenant_id: string; stage: string; assigned_to: string | null; search_text: string }, GramTally>(
    db,
    "stage, assigned_to, search_text",
    () => new GramTally(),
    (tally, d) => tally.add(d.stage, d.assigned_to, d.search_text),
  );
}
