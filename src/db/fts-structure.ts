import type { Db } from "./database";

/**
 * The shape of an FTS5 index, read from its structure record (rowid 10 of its `_data` table):
 * per level, the segments and their leaf pages, and how many of them an unfinished merge takes.
 * FTS5 keeps this shape private (fts5_decode is a debug build's), so it is decoded here, for the
 * merge step's tests and the probes that measure how the index grows.
 */
export interface FtsLevel {
  /** Segments an incremental merge under way takes as input (0: none). */
  merging: number;
  /** Leaf pages of each segment, oldest first. */
  segments: number[];
}

/** SQLite's varint (as FTS5 writes it): big-endian 7-bit groups, the ninth byte whole. */
function varint(buf: Uint8Array, at: number): [number, number] {
  let v = 0;
  for (let i = 0; i < 8; i++) {
    const b = buf[at + i]!;
    v = v * 128 + (b & 0x7f);
    if ((b & 0x80) === 0) return [v, i + 1];
  }
  return [v * 256 + buf[at + 8]!, 9];
}

/** The levels of `table`'s index, lowest first; [] when it holds nothing yet. */
export function ftsLevels(db: Db, table: string): FtsLevel[] {
  const row = db.query(`SELECT block FROM "${table}_data" WHERE id = 10`).get() as { block: Uint8Array } | null;
  return row ? levelsOf(row.block) : [];
}

/** The levels a structure record (the `_data` row of id 10) describes, lowest first. */
export function levelsOf(buf: Uint8Array): FtsLevel[] {
  if (buf.length <= 4) return [];
  let at = 4;
  // FTS5_STRUCTURE_V2 ("\xff\x00\x00\x01"): each segment carries five more values.
  const v2 = buf[4] === 0xff && buf[5] === 0 && buf[6] === 0 && buf[7] === 1;
  if (v2) at += 4;
  const next = () => {
    const [v, n] = varint(buf, at);
    at += n;
    return v;
  };
  const nLevel = next();
  next(); // segments in all
  next(); // write counter
  const levels: FtsLevel[] = [];
  for (let l = 0; l < nLevel; l++) {
    const merging = next();
    const n = next();
    const segments: number[] = [];
    for (let s = 0; s < n; s++) {
      next(); // segment id
      const first = next();
      const last = next();
      if (v2) for (let k = 0; k < 5; k++) next();
      segments.push(last - first + 1);
    }
    levels.push({ merging, segments });
  }
  return levels;
}

/** A level per line: "L3 4 segs [120 80 33 2] merging 2" (for probes' output). */
export function describeLevels(levels: FtsLevel[]): string {
  return levels
    .map((l, i) => (l.segments.length === 0 ? null : `L${i} ${l.segments.length} segs [${l.segments.join(" ")}]${l.merging ? ` merging ${l.merging}` : ""}`))
    .filter((s) => s !== null)
    .join("\n");
}
