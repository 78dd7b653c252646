import { open, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newId } from "../../kernel/ids";
import { MAX_IMPORT_BYTES, importTooLarge } from "../../http/body";
import { RequestValidationError } from "../../kernel/errors";
import { CsvReader, CsvSyntaxError, detectDelimiter } from "./parse";
import { MAX_HEADER_CHARS, MAX_HEADER_COLUMNS, MAX_ROW_CHARS } from "./model";
import type { RowChecker } from "./import-rows";

/** Text handed to the reader at once: a slice's work stays a few milliseconds. */
const PIECE = 65_536;
/** Work between two turns of the event loop. */
const TURN_MS = 10;

/** Lets other requests run: the next step starts in a later turn of the event loop. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A turn that came back sooner than this found nothing else to run. */
const IDLE_TURN_MS = 0.5;

/**
 * A fair turn after a job's batch: turns of the event loop until one comes back at once (nothing
 * else was waiting), or `capMs` have passed. One turn let a request waiting behind a batch take
 * one step only: a sign-in (body read, hash on a thread, session write, answer) or a deal create
 * is several turns, and each of them waited behind another batch (p99 of 48–162 ms during a
 * neighbour's import). When nobody waits this costs one turn, a few microseconds.
 */
export async function fairTurn(capMs = 50): Promise<void> {
  const until = performance.now() + capMs;
  for (;;) {
    const before = performance.now();
    await nextTurn();
    const after = performance.now();
    if (after - before < IDLE_TURN_MS || after >= until) return;
  }
}

/** Gives the event loop a turn whenever `TURN_MS` of work has passed since the last one. */
export function turnTaker() {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < TURN_MS) return;
    await nextTurn();
    since = performance.now();
  };
}

const notUtf8 = () => new RequestValidationError([{ loc: ["body"], msg: "The file is not UTF-8 text: save it as CSV UTF-8", type: "unicode_error" }]);
const headerRefused = (message: string) =>
  new RequestValidationError([{ loc: ["body", 1, "row"], msg: `The first row must name the columns (at most ${MAX_HEADER_COLUMNS}): ${message}.`, type: "csv_header_invalid" }]);

/**
 * Feeds a file's bytes, as they come, to a CSV reader and on to `onRecord` (awaited, so a job
 * can write a batch between records). The header row is read under a tight bound (64 cells,
 * 16 KB): a hostile header is refused at once, as a 422, before the rest is read.
 */
export function csvFeeder(onRecord: (cells: string[], line: number) => void | Promise<void>) {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const reader = new CsvReader(MAX_HEADER_CHARS, MAX_HEADER_COLUMNS);
  let headerDone = false;
  // The rows' own bounds from the record after the header on, within the same piece too.
  const take = (cells: string[], line: number) => {
    if (!headerDone) {
      headerDone = true;
      reader.maxChars = MAX_ROW_CHARS;
      reader.maxCells = 10_000;
    }
    records.push([cells, line]);
  };
  const turn = turnTaker();
  const records: Array<[string[], number]> = [];
  // The separator is the header line's: text is held back until that line is whole (or the
  // header's bound is passed: the reader then refuses it).
  let start: string | null = "";
  async function feedText(text: string, last: boolean) {
    if (start !== null) {
      start += text;
      if (!last && !/[\r\n]/.test(start) && start.length <= MAX_HEADER_CHARS) return;
      reader.delimiter = detectDelimiter(start);
      text = start;
      start = null;
    }
    for (let at = 0; at < text.length || (last && at === 0); at += PIECE) {
      const piece = text.slice(at, at + PIECE);
      const end = last && at + PIECE >= text.length;
      try {
        reader.push(piece, end, take);
      } catch (e) {
        if (e instanceof CsvSyntaxError && !headerDone) throw headerRefused(e.message);
        throw e;
      }
      // A piece holds about a thousand rows, each checked (or written) here: a turn as often as TURN_MS asks.
      for (const [cells, line] of records) {
        await onRecord(cells, line);
        await turn();
      }
      records.length = 0;
      await turn();
      if (end) break;
    }
  }
  return {
    async bytes(chunk: Uint8Array, last = false) {
      let text: string;
      try {
        text = decoder.decode(chunk, { stream: !last });
      } catch {
        throw notUtf8();
      }
      await feedText(text, last);
    },
  };
}

/** Reads a syntax error into the checker's plan (a row error of the file), or rethrows anything else. */
export function syntaxInto(checker: RowChecker, e: unknown): void {
  if (!(e instanceof CsvSyntaxError)) throw e;
  checker.syntaxError(e.line, e.message);
}

/**
 * Streams an upload to a private temporary file while checking it: never more than one chunk
 * of the body in memory. Counts bytes (413 past 50 MB). Answers the file's path; the caller
 * removes it (removeUpload) when done with it.
 */
export async function receiveUpload(body: ReadableStream<Uint8Array> | null, checker: RowChecker): Promise<string> {
  const path = join(tmpdir(), `suite-import-${newId()}.csv`);
  const file = await open(path, "wx", 0o600);
  let ok = false;
  try {
    let size = 0;
    const feeder = csvFeeder((cells) => checker.record(cells));
    let syntaxFailed = false;
    const check = async (chunk: Uint8Array, last: boolean) => {
      if (syntaxFailed) return;
      try {
        await feeder.bytes(chunk, last);
      } catch (e) {
        syntaxInto(checker, e);
        syntaxFailed = true;
      }
    };
    if (body) {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        size += chunk.byteLength;
        if (size > MAX_IMPORT_BYTES) throw importTooLarge();
        await file.write(chunk);
        await check(chunk, false);
      }
    }
    await check(new Uint8Array(0), true);
    ok = true;
    return path;
  } finally {
    await file.close();
    if (!ok) await removeUpload(path);
  }
}

export const removeUpload = (path: string) => rm(path, { force: true }).catch(() => {});

/** Upload files a killed server left behind, a day old (a live job reads its file for minutes, not days). */
export async function removeStaleUploads(now: number): Promise<number> {
  let n = 0;
  for (const name of await readdir(tmpdir()).catch(() => [] as string[])) {
    if (!/^suite-import-[\w-]+\.csv$/.test(name)) continue;
    const path = join(tmpdir(), name);
    const info = await stat(path).catch(() => null);
    if (info && now - info.mtimeMs > 86_400_000) {
      await removeUpload(path);
      n++;
    }
  }
  return n;
}

/** Reads a received file again, a chunk at a time, into `onRecord` (awaited between records). */
export async function replayUpload(path: string, onRecord: (cells: string[], line: number) => void | Promise<void>): Promise<void> {
  const feeder = csvFeeder(onRecord);
  for await (const chunk of Bun.file(path).stream() as unknown as AsyncIterable<Uint8Array>) await feeder.bytes(chunk);
  await feeder.bytes(new Uint8Array(0), true);
}
