/**
 * CSV as spreadsheets read it (RFC 4180: CRLF line ends, a cell with a quote, comma or line
 * break quoted, quotes doubled), with OWASP's guard against formula injection: a text cell that
 * starts with = + - @ tab or CR gets a leading apostrophe, so Excel, LibreOffice and Sheets show
 * it as text instead of running it. Numbers are written as they are (a negative number is data).
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

export type CsvValue = string | number | boolean | null | undefined;

export function csvCell(v: CsvValue): string {
  if (v === null || v === undefined) return "";
  let s = String(v);
  if (typeof v === "string" && FORMULA_START.test(s)) s = `'${s}`;
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const csvLine = (cells: CsvValue[]): string => `${cells.map(csvCell).join(",")}\r\n`;

/** Excel reads a CSV as UTF-8 only when it starts with a byte order mark. */
export const BOM = "\uFEFF";

/**
 * A CSV download that reads its rows a batch at a time (`next` answers an empty batch at the
 * end), so that no more than one batch is ever held in memory, however long the file.
 */
export function csvStream<T>(header: string[], next: () => Promise<T[]>, cells: (row: T) => CsvValue[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(enc.encode(BOM + csvLine(header)));
        return;
      }
      const rows = await next();
      if (rows.length === 0) return controller.close();
      controller.enqueue(enc.encode(rows.map((r) => csvLine(cells(r))).join("")));
    },
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
