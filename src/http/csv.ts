/**
 * CSV as spreadsheets read it (RFC 4180: CRLF line ends, a cell with a quote, comma or line
 * break quoted, quotes doubled), with OWASP's guard against formula injection: a text cell that
 * starts with = + - @ tab or CR gets a leading apostrophe, so Excel, LibreOffice and Sheets show
 * it as text instead of running it. Numbers are written as they are (a negative number is data).
 * An import removes exactly that apostrophe again (unguard), so an export imported back gives
 * the same text. One writer for every download (CRM exports, the audit log).
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;
const GUARDED = /^'[=+\-@\t\r]/;

export type CsvValue = string | number | boolean | null | undefined;

export function csvCell(v: CsvValue): string {
  if (v === null || v === undefined) return "";
  let s = String(v);
  if (typeof v === "string" && FORMULA_START.test(s)) s = `'${s}`;
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const csvLine = (cells: CsvValue[]): string => `${cells.map(csvCell).join(",")}\r\n`;

/** A cell as read from an imported file: our own guard's apostrophe removed. */
export const unguard = (s: string): string => (GUARDED.test(s) ? s.slice(1) : s);

/** Excel reads a CSV as UTF-8 only when it starts with a byte order mark; the import skips it. */
export const BOM = "\uFEFF";

// What JavaScript's \s matches (NEEDS_QUOTES' ^\s and \s$), as code points.
const JS_SPACES = [9, 10, 11, 12, 13, 32, 160, 5760, ...Array.from({ length: 11 }, (_, i) => 8192 + i), 8232, 8233, 8239, 8287, 12288, 65279];
// FORMULA_START as code points: = + - @ tab CR.
const FORMULA_CODES = [61, 43, 45, 64, 9, 13];
// A leading tab or CR is guarded (the apostrophe comes first), so it never counts as leading space.
const LEADING_SPACES = JS_SPACES.filter((c) => !FORMULA_CODES.includes(c));

/** Whether code point `u` is one of `spaces`; printable ASCII (most cells' ends) is ruled out first, cheaply. */
const spaceAt = (u: string, spaces: number[]) => `(CASE WHEN ${u} BETWEEN 33 AND 159 THEN 0 ELSE ${u} IN (${spaces.join(", ")}) END)`;

/**
 * csvCell of a text (or NULL) SQL expression, as an SQL expression: SQLite writes the cells of a
 * large export itself, so the rows never become JavaScript objects (tests/crm/csv.test.ts checks it
 * against csvCell on awkward text). `e` must be a plain column reference: it is repeated. The tests
 * are on code points (unicode()), the cheapest SQLite has; the guard never changes the last one.
 */
export function csvCellSql(e: string): string {
  const guarded = `(CASE WHEN unicode(${e}) IN (${FORMULA_CODES.join(", ")}) THEN '''' || ${e} ELSE ${e} END)`;
  const needsQuotes =
    // One scan for the four characters (GLOB measured cheaper than four instr()).
    `${e} GLOB '*[",' || char(10, 13) || ']*' ` +
    `OR ${spaceAt(`unicode(${e})`, LEADING_SPACES)} OR ${spaceAt(`unicode(substr(${e}, -1))`, JS_SPACES)}`;
  return `(CASE WHEN ${e} IS NULL THEN '' WHEN ${needsQuotes} THEN '"' || replace(${guarded}, '"', '""') || '"' ELSE ${guarded} END)`;
}

/**
 * csvCell of a text column whose values never hold a quote, comma, line break or space (ids,
 * codes): only the formula guard (an id may start with "-"), without csvCellSql's scans.
 */
export const csvGuardedSql = (e: string): string =>
  `(CASE WHEN ${e} IS NULL THEN '' WHEN unicode(${e}) IN (${FORMULA_CODES.join(", ")}) THEN '''' || ${e} ELSE ${e} END)`;

/** csvCell of an integer milliseconds column as its ISO 8601 time (toIso), as an SQL expression. */
export const csvIsoTimeSql = (expr: string): string =>
  `(strftime('%Y-%m-%dT%H:%M:%S', ${expr} / 1000, 'unixepoch') || printf('.%03dZ', ${expr} % 1000))`;

/** csvCell of an integer (or NULL) column, as an SQL expression. */
export const csvIntegerSql = (expr: string): string => `coalesce(CAST(${expr} AS TEXT), '')`;

const encoder = new TextEncoder();
const bytesOf = (chunk: string | Uint8Array): Uint8Array => (typeof chunk === "string" ? encoder.encode(chunk) : chunk);

/**
 * A download pulled by its reader: `next` is called only when the reader (Bun's HTTP server,
 * when the socket has taken the last chunk) asks for more (highWaterMark 0: nothing is read
 * ahead), and answers the next chunk, or null at the end. However long the file and however slow
 * the client, one chunk is in memory at a time. The first chunk (the header line) is sent
 * before anything is read.
 */
export function pulledStream(
  first: string,
  next: () => string | Uint8Array | null | Promise<string | Uint8Array | null>,
  /** Called once when the stream ends, fails or is cancelled (a download's slot is given back). */
  release: () => void = () => {},
): ReadableStream<Uint8Array> {
  let started = false;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!started) {
          started = true;
          controller.enqueue(bytesOf(first));
          return;
        }
        // Each chunk in a turn of the event loop of its own: a client that reads as fast as the
        // server writes (loopback) would otherwise have every chunk read in one run of promise
        // callbacks, holding the thread for the whole file (11.7 s for 1M deals).
        await new Promise<void>((resolve) => setImmediate(resolve));
        let chunk: string | Uint8Array | null;
        try {
          chunk = await next();
        } catch (e) {
          release();
          throw e;
        }
        if (chunk === null) {
          release();
          controller.close();
        } else controller.enqueue(bytesOf(chunk));
      },
      cancel: () => release(),
    },
    { highWaterMark: 0 },
  );
}

/**
 * A CSV download that reads its rows a batch at a time (`next` answers an empty batch at the
 * end), so that no more than one batch is ever held in memory, however long the file.
 */
export function csvStream<T>(header: readonly string[], next: () => Promise<T[]>, cells: (row: T) => CsvValue[]): ReadableStream<Uint8Array> {
  return pulledStream(BOM + csvLine([...header]), async () => {
    const rows = await next();
    return rows.length === 0 ? null : rows.map((r) => csvLine(cells(r))).join("");
  });
}

/** The answer's headers: a download with this file name. */
export const csvHeaders = (filename: string): Record<string, string> => ({
  "content-type": "text/csv; charset=utf-8",
  "content-disposition": `attachment; filename="${filename}"`,
  "cache-control": "no-store",
});

/** Whether a request asks for CSV: `Accept: text/csv`, or `format=csv` for a plain download link. */
export const wantsCsv = (request: Request, format: string | undefined): boolean =>
  format === "csv" || /(^|,)\s*text\/csv\s*(;|,|$)/i.test(request.headers.get("accept") ?? "");
