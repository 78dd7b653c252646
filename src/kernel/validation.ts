import { FormatRegistry, type TSchema } from "@sinclair/typebox";
import { ValueErrorType, type ValueError } from "@sinclair/typebox/errors";
import { Value } from "@sinclair/typebox/value";
import type { ValidationItem } from "./errors";

/** Where a value came from, in FastAPI's words. */
const SOURCES: Record<string, string> = { body: "body", query: "query", params: "path", headers: "header", cookie: "cookie" };

/** Fields whose values never go back into an error body (nor, therefore, anywhere near a log). */
const SECRET_FIELD = /pass|token|secret|code|otp/i;
const MAX_ECHO = 1000;

/**
 * Characters no name or search may hold: C0 and C1 controls (NUL, \n, \r, \t, ESC...), DEL, the
 * Unicode line and paragraph separators, and the bidi embeddings, overrides and isolates
 * (U+202A-U+202E, U+2066-U+2069). Names reach the text of mails, where a newline forges a line
 * and a bidi override disguises what follows; a NUL in a search made SQLite fail (a 500).
 */
const CONTROLS = "\\u0000-\\u001F\\u007F-\\u009F\\u2028\\u2029\\u202A-\\u202E\\u2066-\\u2069";
/** One line of text without control characters; may be empty. Violations are string_pattern_mismatch. */
export const SINGLE_LINE_PATTERN = `^[^${CONTROLS}]*$`;
/** A name: one line without control characters, with at least one non-blank character. */
export const NAME_PATTERN = `^[^${CONTROLS}]*[^${CONTROLS}\\s][^${CONTROLS}]*$`;
/** Multi-line free text (deal notes): tabs and line breaks allowed, no other C0 control nor DEL. */
export const MULTILINE_PATTERN = "^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F]*$";
const SINGLE_LINE = new RegExp(SINGLE_LINE_PATTERN);
/** Whether `text` is one line free of control characters (the query-string counterpart of the patterns). */
export const isSingleLine = (text: string): boolean => SINGLE_LINE.test(text);

const FORMAT_ERRORS = new Map<string, string>([["email", "value is not a valid email address"]]);

/**
 * A rule of one string field that a pattern cannot say (a reserved name, say), checked by the
 * schema like any other so that it is reported beside every other failing field.
 */
export function registerFormat(name: string, check: (value: string) => boolean, message: string): void {
  FormatRegistry.Set(name, check);
  FORMAT_ERRORS.set(name, message);
}

/**
 * Trims and lower-cases the named string fields of a body before it is validated: addresses and
 * subdomains are compared that way (docs/interface.md#tenancy), so `" Bob@X.io "` and `Acme` are accepted as
 * typed. Used as a route's `transform` (`{ transform: lowerCaseFields("email") }`) and by the CLI.
 */
export const lowerCaseFields =
  (...fields: string[]) =>
  ({ body }: { body: unknown }): void => {
    if (!body || typeof body !== "object") return;
    const b = body as Record<string, unknown>;
    for (const f of fields) if (typeof b[f] === "string") b[f] = (b[f] as string).trim().toLowerCase();
  };

interface Described {
  type: string;
  msg: string;
  ctx?: Record<string, unknown>;
}

const quoteList = (values: unknown[]) => values.map((v) => `'${String(v)}'`).join(", ").replace(/, ([^,]*)$/, " or $1");

/** Elysia wraps numbers and booleans of a request in a union with a string that it coerces. */
function coercedVariant(schema: TSchema): { target: TSchema; format: string } | null {
  const anyOf = schema.anyOf as TSchema[] | undefined;
  if (!anyOf || anyOf.length !== 2) return null;
  const str = anyOf.find((s) => s.type === "string" && ["integer", "numeric", "boolean"].includes(s.format as string));
  const target = anyOf.find((s) => s !== str);
  return str && target ? { target, format: str.format as string } : null;
}

function describeUnion(schema: TSchema, value: unknown): Described {
  const anyOf = (schema.anyOf as TSchema[]) ?? [];
  if (anyOf.length > 0 && anyOf.every((s) => s.const !== undefined)) {
    const expected = quoteList(anyOf.map((s) => s.const));
    return { type: "literal_error", msg: `Input should be ${expected}`, ctx: { expected } };
  }
  const coerced = coercedVariant(schema);
  if (coerced) {
    let parsed = value;
    if (typeof value === "string") {
      const text = value.trim();
      if (coerced.format === "integer") {
        if (!/^[+-]?\d+$/.test(text)) return { type: "int_parsing", msg: "Input should be a valid integer, unable to parse string as an integer" };
        parsed = Number(text);
      } else if (coerced.format === "numeric") {
        if (text === "" || !Number.isFinite(Number(text))) return { type: "float_parsing", msg: "Input should be a valid number, unable to parse string as a number" };
        parsed = Number(text);
      } else {
        return { type: "bool_parsing", msg: "Input should be a valid boolean, unable to interpret input" };
      }
    }
    return describeAgainst(coerced.target, parsed);
  }
  // A nullable field (X | null): explain the failure against X.
  const nonNull = anyOf.filter((s) => s.type !== "null");
  if (nonNull.length === 1) return describeAgainst(nonNull[0]!, value);
  return { type: "value_error", msg: "Input does not match any allowed form" };
}

function describeAgainst(schema: TSchema, value: unknown): Described {
  const first = Value.Errors(schema, value).First();
  return first ? describe(first) : { type: "value_error", msg: "Input is not valid" };
}

function describe(e: ValueError): Described {
  const s = e.schema as Record<string, any>;
  const v = e.value;
  switch (e.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return { type: "missing", msg: "Field required" };
    case ValueErrorType.Union:
      return describeUnion(e.schema, v);
    case ValueErrorType.String:
      return { type: "string_type", msg: "Input should be a valid string" };
    case ValueErrorType.StringMinLength:
      return { type: "string_too_short", msg: `String should have at least ${s.minLength} character${s.minLength === 1 ? "" : "s"}`, ctx: { min_length: s.minLength } };
    case ValueErrorType.StringMaxLength:
      return { type: "string_too_long", msg: `String should have at most ${s.maxLength} characters`, ctx: { max_length: s.maxLength } };
    case ValueErrorType.StringPattern:
      return { type: "string_pattern_mismatch", msg: `String should match pattern '${s.pattern}'`, ctx: { pattern: s.pattern } };
    case ValueErrorType.StringFormat:
    case ValueErrorType.StringFormatUnknown:
      return { type: "value_error", msg: FORMAT_ERRORS.get(s.format) ?? `Input should be a valid ${s.format}` };
    case ValueErrorType.Integer:
      if (typeof v === "string") return { type: "int_parsing", msg: "Input should be a valid integer, unable to parse string as an integer" };
      if (typeof v === "number") return { type: "int_from_float", msg: "Input should be a valid integer, got a number with a fractional part" };
      return { type: "int_type", msg: "Input should be a valid integer" };
    case ValueErrorType.Number:
      return typeof v === "string"
        ? { type: "float_parsing", msg: "Input should be a valid number, unable to parse string as a number" }
        : { type: "float_type", msg: "Input should be a valid number" };
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberMinimum:
      return { type: "greater_than_equal", msg: `Input should be greater than or equal to ${s.minimum}`, ctx: { ge: s.minimum } };
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMaximum:
      return { type: "less_than_equal", msg: `Input should be less than or equal to ${s.maximum}`, ctx: { le: s.maximum } };
    case ValueErrorType.IntegerExclusiveMinimum:
    case ValueErrorType.NumberExclusiveMinimum:
      return { type: "greater_than", msg: `Input should be greater than ${s.exclusiveMinimum}`, ctx: { gt: s.exclusiveMinimum } };
    case ValueErrorType.IntegerExclusiveMaximum:
    case ValueErrorType.NumberExclusiveMaximum:
      return { type: "less_than", msg: `Input should be less than ${s.exclusiveMaximum}`, ctx: { lt: s.exclusiveMaximum } };
    case ValueErrorType.Boolean:
      return typeof v === "string"
        ? { type: "bool_parsing", msg: "Input should be a valid boolean, unable to interpret input" }
        : { type: "bool_type", msg: "Input should be a valid boolean" };
    case ValueErrorType.Literal: {
      const expected = quoteList([s.const]);
      return { type: "literal_error", msg: `Input should be ${expected}`, ctx: { expected } };
    }
    case ValueErrorType.Kind:
      if (Array.isArray(s.enum)) {
        const expected = quoteList(s.enum);
        return { type: "literal_error", msg: `Input should be ${expected}`, ctx: { expected } };
      }
      return { type: "value_error", msg: e.message };
    case ValueErrorType.Array:
      return { type: "list_type", msg: "Input should be a valid list" };
    case ValueErrorType.ArrayMaxItems:
      return { type: "too_long", msg: `List should have at most ${s.maxItems} items`, ctx: { max_length: s.maxItems } };
    case ValueErrorType.ArrayMinItems:
      return { type: "too_short", msg: `List should have at least ${s.minItems} item${s.minItems === 1 ? "" : "s"}`, ctx: { min_length: s.minItems } };
    case ValueErrorType.Object:
      return s.properties
        ? { type: "model_attributes_type", msg: "Input should be a valid dictionary or object to extract fields from" }
        : { type: "dict_type", msg: "Input should be a valid dictionary" };
    case ValueErrorType.ObjectAdditionalProperties:
      return { type: "extra_forbidden", msg: "Extra inputs are not permitted" };
    case ValueErrorType.Null:
      return { type: "none_required", msg: "Input should be None" };
    default:
      return { type: "value_error", msg: e.message };
  }
}

const pathToLoc = (path: string): Array<string | number> =>
  path === ""
    ? []
    : path
        .slice(1)
        .split("/")
        .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
        .map((p) => (/^\d+$/.test(p) ? Number(p) : p));

const TOO_BIG = Symbol("too big");

/**
 * A copy of `value` without the members whose names say they hold a secret; TOO_BIG past a
 * small depth or size (an input that large is not worth echoing, and recursing into an
 * attacker's 100 000-deep object would overflow the stack).
 */
function withoutSecrets(value: unknown, budget = { nodes: 200 }, depth = 0): unknown {
  if (value === null || typeof value !== "object") return value;
  if (depth >= 16 || --budget.nodes < 0) return TOO_BIG;
  const copy = (v: unknown) => withoutSecrets(v, budget, depth + 1);
  if (Array.isArray(value)) {
    if (value.length > 200) return TOO_BIG;
    const out = value.map(copy);
    return out.includes(TOO_BIG) ? TOO_BIG : out;
  }
  const entries = Object.entries(value);
  if (entries.length > 200) return TOO_BIG;
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) {
    if (SECRET_FIELD.test(k)) continue;
    const c = copy(v);
    if (c === TOO_BIG) return TOO_BIG;
    out[k] = c;
  }
  return out;
}

function echo(loc: Array<string | number>, value: unknown): unknown {
  if (value === undefined) return undefined;
  if (loc.some((p) => typeof p === "string" && SECRET_FIELD.test(p))) return undefined;
  const safe = withoutSecrets(value);
  if (safe === TOO_BIG) return undefined;
  const text = JSON.stringify(safe);
  return text !== undefined && text.length <= MAX_ECHO ? safe : undefined;
}

/**
 * A nullable (or optional-nullable) object or array that is present but wrong fails as a whole
 * union in TypeBox; FastAPI reports the fields inside it. Answers those inner errors, with full
 * paths, or the error itself when it is not such a wrapper.
 */
function expand(e: ValueError): ValueError[] {
  if (e.type !== ValueErrorType.Union || e.value === null || e.value === undefined) return [e];
  const anyOf = (e.schema.anyOf as TSchema[] | undefined) ?? [];
  const nonNull = anyOf.filter((s) => s.type !== "null");
  if (nonNull.length !== 1 || nonNull.length === anyOf.length || !["object", "array"].includes(nonNull[0]!.type as string)) return [e];
  const inner = [...Value.Errors(nonNull[0]!, e.value)];
  if (inner.length === 0) return [e];
  return inner.flatMap((i) => expand({ ...i, path: e.path + i.path }));
}

/**
 * Turns TypeBox's errors (as Elysia reports them) into FastAPI's 422 items: one item per
 * failing field, `loc` starting with where the value came from.
 */
export function toValidationItems(source: string, list: ValueError[]): ValidationItem[] {
  const where = SOURCES[source] ?? source;
  const seen = new Set<string>();
  const items: ValidationItem[] = [];
  for (const e of list.flatMap(expand)) {
    const loc = [where, ...pathToLoc(e.path)];
    const key = JSON.stringify(loc);
    if (seen.has(key)) continue;
    seen.add(key);
    const d = e.value === undefined || (e.value === null && loc.length === 1) ? { type: "missing", msg: "Field required" } : describe(e);
    const item: ValidationItem = { loc, msg: d.msg, type: d.type };
    const input = d.type === "missing" ? undefined : echo(loc, e.value);
    if (input !== undefined) item.input = input;
    if (d.ctx) item.ctx = d.ctx;
    items.push(item);
  }
  return items;
}
