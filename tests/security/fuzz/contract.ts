import type { Answer } from "./harness";

const LOC_SOURCES = new Set(["body", "query", "path", "header"]);
const SNAKE = /^[a-z0-9]+(_[a-z0-9]+)*$/;
/** An error code: an identifier that starts with a letter (src/kernel/errors.ts). */
const CODE = /^[a-z][a-z0-9_]*$/;
const ITEM_KEYS = new Set(["loc", "msg", "type", "input", "ctx"]);
/** What a stack trace or an SQL error looks like in a body. */
const LEAKS = [/\bat .+:\d+:\d+/, /\.ts:\d+/, /node_modules/, /SQLITE_/i, /\bSELECT\b.+\bFROM\b/i, /\bINSERT INTO\b/i, /\bUPDATE\b.+\bSET\b/i, /no such (table|column)/i, /\bsyntax error\b/i, /fts5/i];

/**
 * The problems with one answer, per docs/interface.md#errors: no 5xx; 4xx bodies in the contract's shape;
 * 401 with WWW-Authenticate: Bearer, 429 with Retry-After; no stack trace or SQL in any body.
 */
export function contractProblems(a: Answer): string[] {
  const problems: string[] = [];
  if (a.status >= 500) problems.push(`status ${a.status}`);
  if (a.status < 400) return problems;

  let body: unknown;
  try {
    body = JSON.parse(a.text);
  } catch {
    return [...problems, "error body is not JSON"];
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return [...problems, "error body is not an object"];
  const b = body as Record<string, unknown>;
  // A 422 item may echo the request's own value (`input`), which the fuzz fills with SQL.
  const own = JSON.stringify(b, (k, v) => (k === "input" ? undefined : v));
  for (const leak of LEAKS) if (leak.test(own)) problems.push(`body looks like it leaks internals (${leak})`);
  if (a.status === 422) {
    if (Object.keys(b).join() !== "detail") problems.push(`422 keys ${Object.keys(b)}`);
    if (!Array.isArray(b.detail) || b.detail.length === 0) problems.push("422 detail is not a non-empty list");
    else for (const item of b.detail) problems.push(...itemProblems(item));
  } else {
    if (Object.keys(b).sort().join() !== "code,detail") problems.push(`error keys ${Object.keys(b)}`);
    if (typeof b.detail !== "string" || b.detail.length === 0) problems.push("detail is not a sentence");
    if (typeof b.code !== "string" || !CODE.test(b.code)) problems.push(`code ${JSON.stringify(b.code)} is not an identifier starting with a letter`);
  }
  if (a.status === 401 && a.headers.get("www-authenticate") !== "Bearer") problems.push("401 without WWW-Authenticate: Bearer");
  if (a.status === 429 && !/^[1-9]\d*$/.test(a.headers.get("retry-after") ?? "")) problems.push("429 without a Retry-After in seconds");
  return problems;
}

function itemProblems(item: unknown): string[] {
  if (typeof item !== "object" || item === null) return ["422 item is not an object"];
  const i = item as Record<string, unknown>;
  const out: string[] = [];
  for (const k of Object.keys(i)) if (!ITEM_KEYS.has(k)) out.push(`422 item has key ${k}`);
  const loc = i.loc;
  if (!Array.isArray(loc) || loc.length === 0 || !LOC_SOURCES.has(loc[0] as string)) out.push(`422 loc ${JSON.stringify(loc)}`);
  else if (!loc.every((p) => typeof p === "string" || (typeof p === "number" && Number.isInteger(p)))) out.push(`422 loc parts ${JSON.stringify(loc)}`);
  if (typeof i.msg !== "string" || i.msg.length === 0) out.push("422 msg is not a string");
  if (typeof i.type !== "string" || !SNAKE.test(i.type)) out.push(`422 type ${JSON.stringify(i.type)}`);
  if ("ctx" in i && (typeof i.ctx !== "object" || i.ctx === null || Array.isArray(i.ctx))) out.push("422 ctx is not an object");
  return out;
}
