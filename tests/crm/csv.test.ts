import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { toIso } from "../../src/kernel/ids";
import { parse } from "csv-parse/sync";
import { CsvSyntaxError, readCsvRecords } from "../../src/crm/export-import/parse";
import { csvCell, csvCellSql, csvGuardedSql, csvIntegerSql, csvIsoTimeSql, csvLine, pulledStream } from "../../src/kernel/csv";

/** A small deterministic generator (mulberry32): failures replay. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Every character csvCell treats specially (formula starts, quoting, JavaScript's \s), and ordinary ones.
const AWKWARD = [..."=+-@\t\r\n\",' ;aZ09é€😀\u000b\u000c\u00a0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000\ufeff\u0085\u200b"];

describe("SQLite writes the same cells as csvCell", () => {
  const db = new Database(":memory:");
  db.run("CREATE TABLE t (v TEXT, n INTEGER)");

  test("text cells: random strings of awkward characters, empty and NULL", () => {
    const next = rng(20261123);
    const values: Array<string | null> = [null, "", " ", "=", "'=x", "plain"];
    for (let i = 0; i < 5000; i++) {
      const len = Math.floor(next() * 7);
      values.push(Array.from({ length: len }, () => AWKWARD[Math.floor(next() * AWKWARD.length)]).join(""));
    }
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
    for (const v of values) insert.run(v);
    const got = db.query(`SELECT ${csvCellSql("v")} AS cell FROM t ORDER BY rowid`).all() as Array<{ cell: string }>;
    const mismatches = values.map((v, i) => ({ v, want: csvCell(v), got: got[i]!.cell })).filter((m) => m.want !== m.got);
    expect(mismatches.slice(0, 5)).toEqual([]);
    expect(got.length).toBe(values.length);
  });

  test("guarded-only cells (ids, codes): the same as csvCell for their alphabets", () => {
    const next = rng(99);
    const alphabet = [..."ABCXYZabcxyz0189_-=+@"];
    const values = [null, "-abc", "USD", "2030-01-15", "=x", "@y", "+z"];
    for (let i = 0; i < 3000; i++) values.push(Array.from({ length: 1 + Math.floor(next() * 21) }, () => alphabet[Math.floor(next() * alphabet.length)]).join(""));
    db.run("DELETE FROM t");
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
    for (const v of values) insert.run(v);
    const got = (db.query(`SELECT ${csvGuardedSql("v")} AS cell FROM t ORDER BY rowid`).all() as Array<{ cell: string }>).map((r) => r.cell);
    expect(got).toEqual(values.map((v) => csvCell(v)));
  });

  test("times as toIso, integers as String", () => {
    const next = rng(7);
    const times = [0, 1, 999, 1000, 86_399_999, 951_782_400_000, 4_102_444_799_999];
    for (let i = 0; i < 2000; i++) times.push(Math.floor(next() * 4_102_444_800_000));
    for (const ms of times) {
      const row = db.query(`SELECT ${csvIsoTimeSql("?1")} AS iso, ${csvIntegerSql("?2")} AS n, ${csvIntegerSql("NULL")} AS none`).get(ms, ms % 101) as Record<string, string>;
      expect({ ms, iso: row.iso, n: row.n }).toEqual({ ms, iso: toIso(ms), n: csvCell(ms % 101) });
      expect(row.none).toBe(csvCell(null));
    }
  });
});

describe("pulledStream: back-pressure", () => {
  test("a chunk is read only when the reader asks: a slow reader never has more than one read ahead", async () => {
    let produced = 0;
    const stream = pulledStream("header\n", () => (produced < 1000 ? `row ${++produced}\n` : null));
    // Nothing is read from the source before anyone reads the stream (highWaterMark 0).
    await Bun.sleep(5);
    expect(produced).toBe(0);
    const reader = stream.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("header\n");
    for (let taken = 1; taken <= 20; taken++) {
      await reader.read();
      // The reader stalls; the source must not run on meanwhile.
      await Bun.sleep(1);
      expect(produced).toBe(taken);
    }
    await reader.cancel();
    const after = produced;
    await Bun.sleep(5);
    expect(produced).toBe(after);
  });

  test("an async source is awaited before the next pull; the end closes the stream", async () => {
    let inFlight = 0;
    let most = 0;
    let n = 0;
    const stream = pulledStream("h", async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      await Bun.sleep(1);
      inFlight--;
      return ++n <= 5 ? new Uint8Array([n]) : null;
    });
    const chunks: number[] = [];
    for await (const c of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(c.byteLength);
    expect(chunks).toEqual([1, 1, 1, 1, 1, 1]);
    expect(most).toBe(1);
  });

  test("over HTTP: a client that stops reading stops the source (bounded by the socket buffers), and then gets every byte", async () => {
    const CHUNK = 64 * 1024;
    const TOTAL = 2000; // 125 MiB if it were all made at once
    let produced = 0;
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => new Response(pulledStream("", () => (produced < TOTAL ? new Uint8Array(CHUNK).fill(97 + (produced++ % 26)) : null))),
    });
    let received = 0;
    let paused = true;
    const socket = await Bun.connect({
      hostname: "127.0.0.1",
      port: server.port!,
      socket: {
        data(_s, d) {
          received += d.byteLength;
        },
      },
    });
    try {
      socket.pause();
      socket.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
      // The client reads nothing: the server fills the socket's buffers, then must stop pulling.
      let last = -1;
      while (produced !== last) {
        last = produced;
        await Bun.sleep(200);
      }
      expect(received).toBe(0);
      // Loopback buffers hold a few MiB at most; without back-pressure all 125 MiB would be made.
      expect(produced * CHUNK).toBeLessThan(32 * 2 ** 20);
      expect(produced).toBeLessThan(TOTAL);
      paused = false;
      socket.resume();
      while (produced < TOTAL || received < TOTAL * CHUNK) await Bun.sleep(20);
      expect(received).toBeGreaterThanOrEqual(TOTAL * CHUNK);
    } finally {
      if (paused) socket.resume();
      socket.end();
      server.stop(true);
    }
  }, 60_000);
});

describe("readCsvRecords: the import's reader", () => {
  const read = (text: string) => {
    const out: string[][] = [];
    readCsvRecords(text, (r) => out.push(r));
    return out;
  };

  test("reads back what csvLine writes, as csv-parse does, with any line end", () => {
    const next = rng(4242);
    for (let file = 0; file < 200; file++) {
      const eol = ["\r\n", "\n", "\r"][file % 3]!;
      const records: string[][] = [];
      for (let r = 0; r < 1 + Math.floor(next() * 8); r++) {
        records.push(Array.from({ length: 1 + Math.floor(next() * 5) }, () => Array.from({ length: Math.floor(next() * 6) }, () => AWKWARD[Math.floor(next() * AWKWARD.length)]).join("")));
      }
      const text = (file % 2 ? "\uFEFF" : "") + records.map((r) => csvLine(r).replace(/\r\n$/, eol)).join("");
      const reference = parse(text, { bom: true, relax_column_count: true, skip_empty_lines: true, record_delimiter: eol }) as string[][];
      expect(read(text)).toEqual(reference);
    }
  });

  test("empty lines are skipped; quoted line breaks stay in their cell; a trailing comma is an empty cell", () => {
    expect(read('a,b\n\n"x\r\ny",\r\n\r\nlast')).toEqual([["a", "b"], ["x\r\ny", ""], ["last"]]);
    expect(read("")).toEqual([]);
    expect(read('""')).toEqual([[""]]);
  });

  test("malformed text is an error naming its line", () => {
    const error = (text: string) => {
      try {
        read(text);
      } catch (e) {
        return e instanceof CsvSyntaxError ? { line: e.line, message: e.message } : String(e);
      }
      return null;
    };
    expect(error('a\n"never closed\nb')).toEqual({ line: 2, message: expect.stringContaining("never closed") });
    expect(error('a\n"x\ny"z\n')).toEqual({ line: 3, message: expect.stringContaining("closing quote") });
    expect(error('a\nb"c\n')).toEqual({ line: 2, message: expect.stringContaining("unquoted cell") });
  });
});
