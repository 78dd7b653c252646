/**
 * CSV cells as spreadsheets read them (RFC 4180: CRLF, quotes doubled), with the OWASP guard
 * against formula injection: a text cell starting with = + - @ tab or CR gets a leading
 * apostrophe, so Excel, LibreOffice and Sheets show it as text instead of running it. The import
 * removes exactly that apostrophe again (unguard), so an export imported back gives the same text.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;
const GUARDED = /^'[=+\-@\t\r]/;

export function csvCell(v: string | number | boolean | null | undefined): string {
  if (v === null || v === undefined) return "";
  let s = String(v);
  if (typeof v === "string" && FORMULA_START.test(s)) s = `'${s}`;
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const csvLine = (cells: Array<string | number | boolean | null | undefined>): string => `${cells.map(csvCell).join(",")}\r\n`;

/** A cell as read from an imported file: our own guard's apostrophe removed. */
export const unguard = (s: string): string => (GUARDED.test(s) ? s.slice(1) : s);

/** Excel reads a CSV as UTF-8 only when it starts with a byte order mark; the import skips it. */
export const BOM = "\uFEFF";
