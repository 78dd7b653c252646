/**
 * CSV as spreadsheets read it (RFC 4180: CRLF line ends, a cell with a quote, comma or line
 * break quoted, quotes doubled), with OWASP's guard against formula injection. A spreadsheet may
 * split a line on `;` or tab instead of `,` (Europe's default is `;`) and ignores our quotes then,
 * so a formula can start anywhere a delimiter ends: at the cell's start and after every `,`, `;`,
 * tab or line break inside it. At each of those places, a formula character (= + - @ tab CR) or an
 * apostrophe gets an apostrophe in front (`Mozilla/5.0;'=HYPERLINK(A1)`), so the spreadsheet shows
 * text instead of running it; after `;`, tab or a line break a double quote does too (such a
 * reader takes `;"=1+1"` as a quoted field holding a formula), but not at the cell's start or after
 * a comma, where our own quoting holds (a comma inside a cell is always quoted). Guarding apostrophes too keeps the guard reversible: an import
 * removes exactly one apostrophe at each such place (unguard), so an export imported back gives
 * the same text. Numbers are written as they are (a negative number is data). One writer for
 * every download (CRM exports, the audit log).
 */
const MAY_NEED_GUARD = /^['=+\-@\t\r]|,['=+\-@\t\r]|[;\t\r\n]['"=+\-@\t\r]/;
const GUARD_PLACES = /^(?=['=+\-@\t\r])|(?<=,)(?=['=+\-@\t\r])|(?<=[;\t\r\n])(?=['"=+\-@\t\r])/g;
const GUARD_MARKS = /^'(?=['=+\-@\t\r])|(?<=,)'(?=['=+\-@\t\r])|(?<=[;\t\r\n])'(?=['"=+\-@\t\r])/g;
const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

export type CsvValue = string | number | boolean | null | undefined;

/** A text with the formula guard's apostrophes added (see above). */
export const guardFormulas = (s: string): string => (MAY_NEED_GUARD.test(s) ? s.replace(GUARD_PLACES, "'") : s);

export function csvCell(v: CsvValue): string {
  if (v === null || v === undefined) return "";
  let s = String(v);
  if (typeof v === "string") s = guardFormulas(s);
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const csvLine = (cells: CsvValue[]): string => `${cells.map(csvCell).join(",")}\r\n`;

/** A cell as read from an imported file: our own guard's apostrophes removed (guardFormulas undone). */
export const unguard = (s: string): string => (s.includes("'") ? s.replace(GUARD_MARKS, "") : s);

/** Excel reads a CSV as UTF-8 only when it starts with a byte order mark; the import skips it. */
export const BOM = "\uFEFF";

// What JavaScript's \s matches (NEEDS_QUOTES' ^\s and \s$), as code points.
const JS_SPACES = [9, 10, 11, 12, 13, 32, 160, 5760, ...Array.from({ length: 11 }, (_, i) => 8192 + i), 8232, 8233, 8239, 8287, 12288, 65279];
// What is guarded where a cell or a delimiter ends, as code points: the apostrophe, = + - @ tab CR.
const FORMULA_CODES = [39, 61, 43, 45, 64, 9, 13];
// Where a spreadsheet may start a cell inside ours: after , ; tab CR LF; after all but the comma a double quote is guarded too.
const DELIMITER_CODES = [44, 59, 9, 13, 10];
const AFTER_DELIMITER_CODES = [39, 34, ...FORMULA_CODES.slice(1)];
const guardedAfter = (d: number) => (d === 44 ? FORMULA_CODES : AFTER_DELIMITER_CODES);
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
  // One scan finds the rare cell with a delimiter before a guarded character (the pattern is one
  // literal, its tab, CR and LF written as they are); only those pay for innerGuardSql's chain.
  // Measured: 0.2-0.5 µs more a cell than the start guard alone (five instr() were slower).
  const inner = `(CASE WHEN ${e} GLOB '*[,;\t\r\n][''"=+@\t\r-]*' THEN ${innerGuardSql(e)} ELSE ${e} END)`;
  const guarded = `(CASE WHEN unicode(${e}) IN (${FORMULA_CODES.join(", ")}) THEN '''' || ${inner} ELSE ${inner} END)`;
  const needsQuotes =
    // One scan for the four characters (GLOB measured cheaper than four instr()).
    `${e} GLOB '*[",' || char(10, 13) || ']*' ` +
    `OR ${spaceAt(`unicode(${e})`, LEADING_SPACES)} OR ${spaceAt(`unicode(substr(${e}, -1))`, JS_SPACES)}`;
  return `(CASE WHEN ${e} IS NULL THEN '' WHEN ${needsQuotes} THEN '"' || replace(${guarded}, '"', '""') || '"' ELSE ${guarded} END)`;
}

/** Characters as an SQL string literal, control characters written as they are: a constant, not a char() call a row. */
const sqlText = (...codes: number[]): string => `'${String.fromCharCode(...codes).replace(/'/g, "''")}'`;

/**
 * guardFormulas' apostrophes after each delimiter, as an SQL expression: one replace() of each
 * (delimiter, guarded character) pair. Each delimiter's apostrophe pair runs first, before its
 * other pairs make new "delimiter, apostrophe" sequences that it must not guard again; an inserted
 * apostrophe otherwise only splits its own pair. replace() does not see overlapping matches, so a
 * pair whose two characters are the same (tab tab, CR CR) runs twice. The cell's first character
 * is csvCellSql's to guard.
 */
function innerGuardSql(e: string): string {
  let x = e;
  for (const d of DELIMITER_CODES) {
    for (const g of guardedAfter(d)) {
      for (let pass = 0; pass < (d === g ? 2 : 1); pass++) x = `replace(${x}, ${sqlText(d, g)}, ${sqlText(d, 39, g)})`;
    }
  }
  return x;
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
