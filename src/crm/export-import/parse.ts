/**
 * An RFC 4180 reader for imports: records one at a time, from the file's text as it arrives in
 * pieces (csv-parse, measured on the bench's 100,000-row file, took 3.6 times the CPU and about
 * 70 MB more peak memory for the same records).
 * Cells are separated by commas, or by the semicolons or tabs the header line uses instead
 * (detectDelimiter: spreadsheets in many languages save "CSV" with semicolons); a record ends at CRLF, LF or a lone CR; a cell starting with a
 * quote runs to the matching quote, with "" for a quote and line breaks allowed inside. A byte
 * order mark first is skipped, and so are empty lines. Malformed text throws CsvSyntaxError.
 *
 * Linear in the text: a record cut by the end of a piece is read again from its start when the
 * next piece comes, so a record is bounded (`maxChars`, `maxCells`): a header of 160,000
 * columns is refused at its 65th cell instead of being read whole.
 */
export class CsvSyntaxError extends Error {
  constructor(
    message: string,
    /** The physical line (1-based) where the problem is. */
    readonly line: number,
  ) {
    super(message);
  }
}

const COMMA = 44;
const SEMICOLON = 59;
const TAB = 9;
const QUOTE = 34;
const LF = 10;
const CR = 13;
/** What a piece ends with when more may follow: the record it cuts is read again later. */
const INCOMPLETE = Symbol("incomplete");

export class CsvReader {
  private buf = "";
  private line = 1;
  private first = true;
  constructor(
    /** Longest record, in UTF-16 units (the caller lowers it for the header). */
    public maxChars = 1_048_576,
    /** Most cells a record may have. */
    public maxCells = 10_000,
    /** The character between cells, as a char code: comma, semicolon or tab. */
    public delimiter = COMMA,
  ) {}

  /** The records completed by this piece of text (`last`: the file ends here). */
  push(text: string, last: boolean, onRecord: (cells: string[], line: number) => void): void {
    let s = this.buf.length === 0 ? text : this.buf + text;
    let i = 0;
    if (this.first && s.length > 0) {
      this.first = false;
      if (s.charCodeAt(0) === 0xfeff) i = 1;
    }
    for (;;) {
      const start = i;
      const startLine = this.line;
      const r = this.record(s, i, last);
      if (r === INCOMPLETE) {
        this.line = startLine;
        if (s.length - start > this.maxChars) throw new CsvSyntaxError(`a row is longer than ${this.maxChars} characters`, startLine);
        this.buf = s.slice(start);
        return;
      }
      if (r === null) break;
      i = r.next;
      if (i - start > this.maxChars) throw new CsvSyntaxError(`a row is longer than ${this.maxChars} characters`, startLine);
      if (r.cells !== null) onRecord(r.cells, startLine);
    }
    this.buf = "";
    s = "";
  }

  /** One record from `i`: its cells (null: an empty line) and where the next starts; null at the end. */
  private record(text: string, i: number, last: boolean): { cells: string[] | null; next: number } | null | typeof INCOMPLETE {
    const n = text.length;
    if (i >= n) return null;
    const eol = (): boolean => {
      const c = text.charCodeAt(i);
      if (c === CR) {
        if (i + 1 >= n && !last) return false;
        i += text.charCodeAt(i + 1) === LF ? 2 : 1;
      } else if (c === LF) i++;
      else return false;
      this.line++;
      return true;
    };
    const c0 = text.charCodeAt(i);
    if (c0 === CR || c0 === LF) {
      if (c0 === CR && i + 1 >= n && !last) return INCOMPLETE;
      eol();
      return { cells: null, next: i };
    }
    const cells: string[] = [];
    for (;;) {
      if (cells.length >= this.maxCells) throw new CsvSyntaxError(`a row has more than ${this.maxCells} cells`, this.line);
      if (text.charCodeAt(i) === QUOTE) {
        const startLine = this.line;
        let cell = "";
        let from = i + 1;
        for (;;) {
          const q = text.indexOf('"', from);
          if (q < 0) {
            if (!last) return INCOMPLETE;
            throw new CsvSyntaxError(`a quoted cell opened on line ${startLine} is never closed`, startLine);
          }
          if (q + 1 >= n && !last) return INCOMPLETE; // "" or the end: the next piece decides
          this.line += countLineBreaks(text, from, q);
          if (text.charCodeAt(q + 1) === QUOTE) {
            cell += text.slice(from, q + 1);
            from = q + 2;
            continue;
          }
          cell += text.slice(from, q);
          i = q + 1;
          break;
        }
        const c = text.charCodeAt(i);
        if (i < n && c !== this.delimiter && c !== CR && c !== LF) throw new CsvSyntaxError(`a closing quote must end its cell (line ${this.line})`, this.line);
        cells.push(cell);
      } else {
        let j = i;
        for (; j < n; j++) {
          const c = text.charCodeAt(j);
          if (c === this.delimiter || c === CR || c === LF) break;
          if (c === QUOTE) throw new CsvSyntaxError(`a quote inside an unquoted cell (line ${this.line}); quote the whole cell and double the quote`, this.line);
        }
        if (j >= n && !last) return INCOMPLETE;
        cells.push(text.slice(i, j));
        i = j;
      }
      if (i >= n) {
        if (!last) return INCOMPLETE;
        return { cells, next: i };
      }
      if (text.charCodeAt(i) === this.delimiter) {
        i++;
        continue;
      }
      if (!eol()) return INCOMPLETE;
      return { cells, next: i };
    }
  }
}

/**
 * The cell separator of a file, from its header line (`text`: the file's start, up to its first
 * line break at least): whichever of comma, semicolon and tab occurs most outside quotes there;
 * a tie or none is a comma. Header names hold no separators, so the count is the columns'.
 */
export function detectDelimiter(text: string): number {
  const counts = new Map<number, number>([[COMMA, 0], [SEMICOLON, 0], [TAB, 0]]);
  let quoted = false;
  for (let i = text.charCodeAt(0) === 0xfeff ? 1 : 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) quoted = !quoted;
    else if (!quoted && (c === CR || c === LF)) break;
    else if (!quoted && counts.has(c)) counts.set(c, counts.get(c)! + 1);
  }
  let best = COMMA;
  for (const [c, n] of counts) if (n > counts.get(best)!) best = c;
  return best;
}

/** Calls `onRecord` with each record's cells, in order (the whole text at once). */
export function readCsvRecords(text: string, onRecord: (cells: string[]) => void): void {
  new CsvReader(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER).push(text, true, (cells) => onRecord(cells));
}

/** Line breaks (CRLF, LF or CR each one) in text[from, to). */
function countLineBreaks(text: string, from: number, to: number): number {
  let breaks = 0;
  for (let k = from; k < to; k++) {
    const c = text.charCodeAt(k);
    if (c === LF || (c === CR && text.charCodeAt(k + 1) !== LF)) breaks++;
  }
  return breaks;
}
