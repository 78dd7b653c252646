import { type TSchema, t } from "elysia";
import { RequestValidationError, type ValidationItem } from "./errors";
import { SINGLE_LINE_PATTERN, isSingleLine } from "./validation";

/** A page of any list: FastAPI's `{items, total, page, size, pages}` (CONTRACT §10). */
export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  size: number;
  pages: number;
}

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_SEARCH = 200;
/** The `search` parameter, for the API description (QueryReader.search checks the same). */
export const SEARCH_SCHEMA = { type: "string", maxLength: MAX_SEARCH, pattern: SINGLE_LINE_PATTERN };

export type RawQuery = Record<string, string | string[] | undefined>;

const TRUE = new Set(["true", "1", "yes", "on"]);
const FALSE = new Set(["false", "0", "no", "off"]);

/** `yes` → `[Yy][Ee][Ss]`: a word in any case, as a pattern (JSON Schema patterns have no flags). */
const anyCase = (word: string) => word.replace(/[a-z]/g, (c) => `[${c.toUpperCase()}${c}]`);

/**
 * A query boolean as the API description gives it: text, since a query holds no JSON booleans,
 * in exactly the spellings QueryReader.bool reads (the same word lists, any case, spaces around).
 */
export const QUERY_BOOLEAN = {
  description: `true: ${[...TRUE].join(", ")}; false: ${[...FALSE].join(", ")}; any case; absent is false`,
  schema: { type: "string", pattern: `^\\s*(?:${[...TRUE, ...FALSE].map(anyCase).join("|")})\\s*$`, default: "false", examples: ["true", "false"] },
};

/** Every value of every query parameter of a URL, repeated ones as lists. */
export function rawQuery(url: string): RawQuery {
  const out: RawQuery = {};
  const at = url.indexOf("?");
  if (at === -1) return out;
  for (const [k, v] of new URLSearchParams(url.slice(at + 1))) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

/**
 * Reads list parameters by hand rather than by a route schema: Elysia's query coercion reports
 * bounds without their `loc` and fills absent enums with a default. Every failing parameter
 * gets its own item, as FastAPI does. A repeated scalar parameter counts by its last value.
 */
export class QueryReader {
  readonly items: ValidationItem[] = [];
  constructor(private readonly raw: RawQuery) {}

  /** The last value of a parameter given more than once. */
  value(name: string): string | undefined {
    const v = this.raw[name];
    return Array.isArray(v) ? v.at(-1) : v;
  }

  /** Every non-empty value of a repeatable parameter, in order. */
  all(name: string): string[] {
    const v = this.raw[name];
    return v === undefined ? [] : ([] as string[]).concat(v).filter((s) => s !== "");
  }

  /** Pydantic's lax booleans: true/false/1/0/yes/no/on/off in any case; absent is false. */
  bool(name: string): boolean {
    const text = this.value(name);
    if (text === undefined) return false;
    const s = text.trim().toLowerCase();
    if (TRUE.has(s)) return true;
    if (!FALSE.has(s)) this.items.push({ loc: ["query", name], msg: "Input should be a valid boolean, unable to interpret input", type: "bool_parsing", input: text });
    return false;
  }

  int(name: string, fallback: number, min: number, max?: number): number {
    const text = this.value(name);
    if (text === undefined) return fallback;
    const loc = ["query", name];
    if (!/^\s*[+-]?\d+\s*$/.test(text)) {
      this.items.push({ loc, msg: "Input should be a valid integer, unable to parse string as an integer", type: "int_parsing", input: text });
      return fallback;
    }
    const n = Number(text);
    if (n < min) this.items.push({ loc, msg: `Input should be greater than or equal to ${min}`, type: "greater_than_equal", input: text, ctx: { ge: min } });
    else if (max !== undefined && n > max)
      this.items.push({ loc, msg: `Input should be less than or equal to ${max}`, type: "less_than_equal", input: text, ctx: { le: max } });
    return n;
  }

  literal<T extends string>(name: string, allowed: readonly T[]): T | null {
    const text = this.value(name);
    if (text === undefined || text === "") return null;
    if ((allowed as readonly string[]).includes(text)) return text as T;
    const expected = allowed.map((a) => `'${a}'`).join(", ").replace(/, ([^,]*)$/, " or $1");
    this.items.push({ loc: ["query", name], msg: `Input should be ${expected}`, type: "literal_error", input: text, ctx: { expected } });
    return null;
  }

  /** Trimmed; null when absent or blank. A control character (NUL, a newline) anywhere is a 422. */
  search(name: string): string | null {
    const raw = this.value(name);
    if (raw !== undefined && !isSingleLine(raw)) {
      this.items.push({ loc: ["query", name], msg: `String should match pattern '${SINGLE_LINE_PATTERN}'`, type: "string_pattern_mismatch", ctx: { pattern: SINGLE_LINE_PATTERN } });
      return null;
    }
    const text = raw?.trim();
    if (!text) return null;
    if (text.length > MAX_SEARCH) {
      this.items.push({
        loc: ["query", name],
        msg: `String should have at most ${MAX_SEARCH} characters`,
        type: "string_too_long",
        ctx: { max_length: MAX_SEARCH },
      });
      return null;
    }
    return text;
  }

  /** page ≥ 1 and 1 ≤ size ≤ 100. */
  paging(): { page: number; size: number } {
    return { page: this.int("page", 1, 1), size: this.int("size", DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE) };
  }

  /** Throws the collected failures, if any. */
  done(): void {
    if (this.items.length > 0) throw new RequestValidationError(this.items);
  }
}

export const pageOf = <T>(items: T[], total: number, page: number, size: number): Page<T> => ({
  items,
  total,
  page,
  size,
  pages: total === 0 ? 0 : Math.ceil(total / size),
});

/** Rows to skip; bounded so that an absurd page number is just a page past the end. */
export const offsetOf = (page: number, size: number): number => Math.min((page - 1) * size, Number.MAX_SAFE_INTEGER);

/** A LIKE pattern matching `text` anywhere, with LIKE's wildcards taken literally (ESCAPE '\'). */
export const containsPattern = (text: string): string => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The schema of a page of `item`, for the API description. */
export const pageSchema = <T extends TSchema>(item: T) =>
  t.Object({ items: t.Array(item), total: t.Integer(), page: t.Integer(), size: t.Integer(), pages: t.Integer() });

/**
 * The query parameters of a list, for the API description only: they are read by QueryReader,
 * not by a route schema (see there why).
 */
export const listParameters = (extra: Array<{ name: string; description: string; schema: Record<string, unknown> }>) => [
  { name: "page", in: "query", required: false, description: "Page number, from 1", schema: { type: "integer", minimum: 1, default: 1 } },
  {
    name: "size",
    in: "query",
    required: false,
    description: "Items per page",
    schema: { type: "integer", minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
  },
  ...extra.map((p) => ({ ...p, in: "query", required: false })),
];
