import type { Db } from "./database";
import { addCounterRows, recountByTenant } from "./deal-grams";

/** A text sort's bucket in deal_key_grams (schema version 13): the key's first 6 characters, as SQLite's substr(key, 1, 6) counts them (code points). */
export const KEY_BUCKET = 6;

/** The bucket of a sort key: its first KEY_BUCKET code points. */
export function bucketOf(key: string): string {
  let i = 0;
  for (let n = 0; n < KEY_BUCKET && i < key.length; n++) i += key.codePointAt(i)! > 0xffff ? 2 : 1;
  return key.slice(0, i);
}

/** The text sorts deal_key_grams counts, by their `ord` value. */
export const KEY_ORDS = ["t", "a", "c"] as const;
export type KeyOrd = (typeof KEY_ORDS)[number];

/** The distinct 3-character pieces of a search text, none holding the newline between its parts (as the triggers cut them). */
export function trigramsOf(text: string): Set<string> {
  const out = new Set<string>();
  const cps = [...text];
  for (let i = 0; i + 3 <= cps.length; i++) {
    const g = cps[i]! + cps[i + 1]! + cps[i + 2]!;
    if (!g.includes("\n")) out.add(g);
  }
  return out;
}

/** Above this many (sort, bucket, gram) entries per slot the table doubles. */
const LOAD = 0.75;
/** An entry's key is bucket number × GRAM_SPAN + gram number (exact in a double below 2^53). */
const GRAM_SPAN = 2 ** 26;

/**
 * deal_key_grams added up in memory (the bulk seed, with the triggers dropped; migration 13's
 * backfill): for each deal, each of its sort buckets counts each of its distinct 3-character
 * pieces once and the deal itself under gram ''. Entries live in one open-addressing table of
 * numbers (a Map of 2M entries costs several times the memory), written in the table's key order.
 */
export class KeyGramTally {
  private readonly grams: string[] = [""];
  private readonly bucketIds = new Map<string, number>();
  private readonly buckets: Array<[KeyOrd, string]> = [];
  private keys = new Float64Array(1 << 16).fill(-1);
  private counts = new Int32Array(1 << 16);
  private size = 0;
  /** The last deal that counted each gram (a deal counts a gram once). */
  private seen = new Int32Array(1 << 12);
  private deal = 0;
  private readonly dealGrams: number[] = [];

  /** Characters numbered as first met (BMP by table, astral by map): a 3-character piece is then one number, its id found without making its string. */
  private readonly charIds = new Int32Array(0x10000).fill(-1);
  private readonly astralIds = new Map<number, number>();
  private readonly chars: string[] = [];
  /**
   * A piece's id by (first, second, third character numbers) packed in one number (exact below
   * 2^53: fewer than 2^17 distinct characters), in an open-addressing table (a Map of numbers cost
   * about a second a million deals more).
   */
  private pieceKeys = new Float64Array(1 << 14).fill(-1);
  private pieceIdsAt = new Int32Array(1 << 14);

  private charId(c: number): number {
    if (c < 0x10000) {
      const id = this.charIds[c]!;
      if (id >= 0) return id;
      this.chars.push(String.fromCharCode(c));
      return (this.charIds[c] = this.chars.length - 1);
    }
    let id = this.astralIds.get(c);
    if (id === undefined) {
      this.chars.push(String.fromCodePoint(c));
      this.astralIds.set(c, (id = this.chars.length - 1));
    }
    return id;
  }

  private pieceSlot(packed: number): number {
    const mask = this.pieceKeys.length - 1;
    let h = (Math.imul(packed % 4294967296, 0x9e3779b1) ^ Math.imul(Math.floor(packed / 4294967296), 0x85ebca77)) & mask;
    for (;;) {
      const k = this.pieceKeys[h]!;
      if (k === packed || k < 0) return h;
      h = (h + 1) & mask;
    }
  }

  private gramId(x: number, y: number, z: number): number {
    const packed = (x * 131072 + y) * 131072 + z;
    const h = this.pieceSlot(packed);
    if (this.pieceKeys[h] === packed) return this.pieceIdsAt[h]!;
    const id = this.grams.length;
    this.grams.push(this.chars[x]! + this.chars[y]! + this.chars[z]!);
    this.pieceKeys[h] = packed;
    this.pieceIdsAt[h] = id;
    if (id >= this.seen.length) {
      const grown = new Int32Array(this.seen.length * 2);
      grown.set(this.seen);
      this.seen = grown;
    }
    // Pieces are ids 1.. (0 is ''): at half full the table doubles.
    if (id * 2 > this.pieceKeys.length) {
      const [keys, ids] = [this.pieceKeys, this.pieceIdsAt];
      this.pieceKeys = new Float64Array(keys.length * 2).fill(-1);
      this.pieceIdsAt = new Int32Array(keys.length * 2);
      for (let i = 0; i < keys.length; i++) {
        if (keys[i]! < 0) continue;
        const at = this.pieceSlot(keys[i]!);
        this.pieceKeys[at] = keys[i]!;
        this.pieceIdsAt[at] = ids[i]!;
      }
    }
    return id;
  }

  private bucketId(ord: KeyOrd, bucket: string): number {
    const name = `${ord}${bucket}`;
    let id = this.bucketIds.get(name);
    if (id === undefined) {
      id = this.buckets.length;
      this.buckets.push([ord, bucket]);
      this.bucketIds.set(name, id);
    }
    return id;
  }

  private slot(key: number): number {
    const mask = this.keys.length - 1;
    let h = (Math.imul(key / GRAM_SPAN, 0x9e3779b1) ^ Math.imul(key % GRAM_SPAN, 0x85ebca77)) & mask;
    for (;;) {
      const k = this.keys[h]!;
      if (k === key || k < 0) return h;
      h = (h + 1) & mask;
    }
  }

  private increment(key: number, by: number): void {
    const h = this.slot(key);
    if (this.keys[h]! < 0) {
      this.keys[h] = key;
      if (++this.size > this.keys.length * LOAD) {
        this.counts[h] = by;
        this.grow();
        return;
      }
    }
    this.counts[h]! += by;
  }

  private grow(): void {
    const [keys, counts] = [this.keys, this.counts];
    this.keys = new Float64Array(keys.length * 2).fill(-1);
    this.counts = new Int32Array(keys.length * 2);
    for (let i = 0; i < keys.length; i++) {
      if (keys[i]! < 0) continue;
      const h = this.slot(keys[i]!);
      this.keys[h] = keys[i]!;
      this.counts[h] = counts[i]!;
    }
  }

  /** Counts one deal: its search text under the buckets of its title, account and contact sort keys (no contact: not counted under 'c'). */
  add(text: string, titleKey: string, accountKey: string, contactKey: string | null): void {
    const deal = ++this.deal;
    const grams = this.dealGrams;
    grams.length = 0;
    grams.push(0);
    let a = -1;
    let b = -1;
    for (let i = 0; i < text.length; ) {
      const c = text.codePointAt(i)!;
      i += c > 0xffff ? 2 : 1;
      if (c === 10) {
        a = b = -1;
        continue;
      }
      const ch = this.charId(c);
      if (a >= 0) {
        const id = this.gramId(a, b, ch);
        if (this.seen[id] !== deal) {
          this.seen[id] = deal;
          grams.push(id);
        }
      }
      a = b;
      b = ch;
    }
    const keys: Array<[KeyOrd, string | null]> = [["t", titleKey], ["a", accountKey], ["c", contactKey]];
    for (const [ord, key] of keys) {
      if (key === null) continue;
      const base = this.bucketId(ord, bucketOf(key)) * GRAM_SPAN;
      for (const g of grams) this.increment(base + g, 1);
    }
  }

  /** How many rows write() writes. */
  rows(): number {
    return this.size;
  }

  /**
   * The tally's rows in the table's key order (ord, gram, bucket), flat: ord, gram, bucket, n, ord, …
   * (plain values: a tally counted on another thread sends them back as they are).
   */
  sortedRows(): Array<string | number> {
    // Ranks in SQLite's order (bytes of UTF-8): code point order, which JS's < is not for astral characters.
    const byCodePoints = (x: string, y: string): number => {
      const [p, q] = [[...x], [...y]];
      for (let i = 0; i < p.length && i < q.length; i++) if (p[i] !== q[i]) return p[i]!.codePointAt(0)! - q[i]!.codePointAt(0)!;
      return p.length - q.length;
    };
    const rank = (names: string[]): Int32Array => {
      const r = new Int32Array(names.length);
      names.map((_, i) => i).sort((x, y) => byCodePoints(names[x]!, names[y]!)).forEach((id, i) => (r[id] = i));
      return r;
    };
    const gramRank = rank(this.grams);
    const bucketRank = rank(this.buckets.map(([o, b]) => `${o}${b}`));
    const gramAt = new Int32Array(gramRank.length);
    gramRank.forEach((r, id) => (gramAt[r] = id));
    const bucketAt = new Int32Array(bucketRank.length);
    bucketRank.forEach((r, id) => (bucketAt[r] = id));
    const ordRank: Record<KeyOrd, number> = { a: 0, c: 1, t: 2 };
    const [B, G] = [this.buckets.length, this.grams.length];
    // Each entry as one number in key order, (ord, gram, bucket) ranks (exact: 3 × G × B < 2^53 for
    // G < 2^26 grams and B < 2^25 buckets), sorted as numbers: no array of entries, no comparator.
    const order = new Float64Array(this.size);
    let j = 0;
    for (let i = 0; i < this.keys.length; i++) {
      const key = this.keys[i]!;
      if (key < 0) continue;
      const bucket = Math.floor(key / GRAM_SPAN);
      order[j++] = (ordRank[this.buckets[bucket]![0]] * G + gramRank[key % GRAM_SPAN]!) * B + bucketRank[bucket]!;
    }
    order.sort();
    const out: Array<string | number> = new Array(this.size * 4);
    j = 0;
    for (const o of order) {
      const bucket = bucketAt[o % B]!;
      const gram = gramAt[Math.floor(o / B) % G]!;
      const [ord, name] = this.buckets[bucket]!;
      out[j++] = ord;
      out[j++] = this.grams[gram]!;
      out[j++] = name;
      out[j++] = this.counts[this.slot(bucket * GRAM_SPAN + gram)]!;
    }
    return out;
  }

  /** Adds the tally to the tenant's rows, in the table's key order (ord, gram, bucket): appended rather than spread over the tree. */
  write(db: Db, tenantId: string): void {
    writeKeyGramRows(db, tenantId, this.sortedRows());
  }
}

/** Adds sortedRows() to the tenant's deal_key_grams (addCounterRows). */
export function writeKeyGramRows(db: Db, tenantId: string, rows: ReadonlyArray<string | number>): void {
  addCounterRows(db, "deal_key_grams", ["ord", "gram", "bucket"], tenantId, rows);
}

/** deal_key_grams counted anew from every deal (migration 13's backfill): recountByTenant. */
export function recountDealKeyGrams(db: Db): void {
  db.run("DELETE FROM deal_key_grams");
  recountByTenant<{ tenant_id: string; title_key: string; account_key: string; contact_key: string | null; search_text: string }, KeyGramTally>(
    db,
    "title_key, account_key, contact_key, search_text",
    () => new KeyGramTally(),
    (tally, d) => tally.add(d.search_text, d.title_key, d.account_key, d.contact_key),
  );
}
