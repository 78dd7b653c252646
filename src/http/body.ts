import { AppError, RequestValidationError, errors } from "../kernel/errors";
import { requestPath } from "./request-path";

export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The one exception to the 1 MiB bound: CSV imports (src/crm/export-import/routes.ts) take a
 * spreadsheet of up to 50 MB as the body, which they read and count themselves while it streams.
 * Our JSON reader leaves these bodies alone.
 */
export const CSV_IMPORT_PATH = /^\/api\/v1\/crm\/(?:deals|accounts|contacts)\/import\/?$/;
export const MAX_IMPORT_BYTES = 50 * 1024 * 1024;
export const isCsvImport = (request: Request): boolean => request.method === "POST" && CSV_IMPORT_PATH.test(requestPath(request.url));

/** Refuses, before reading a byte, a body that announces itself as too large. */
export function checkDeclaredLength(request: Request): void {
  const declared = request.headers.get("content-length");
  const limit = isCsvImport(request) ? MAX_IMPORT_BYTES : MAX_BODY_BYTES;
  if (declared !== null && Number(declared) > limit) throw isCsvImport(request) ? importTooLarge() : errors.payloadTooLarge();
}

export const importTooLarge = () => new AppError(413, "payload_too_large", "A CSV import is at most 50 MB.");

const isJson = (contentType: string) => /^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(contentType.trim());

/**
 * Reads a JSON body with the 1 MiB bound enforced while streaming (a chunked body announces
 * no length). An empty body reads as null, which the route's schema then reports as missing.
 */
export async function readJsonBody(request: Request, contentType: string): Promise<unknown> {
  if (!request.body) return null;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) throw errors.payloadTooLarge();
    chunks.push(chunk);
  }
  if (size === 0) return null;
  if (!isJson(contentType)) throw errors.unsupportedMediaType();
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new JsonInvalid(0, "Invalid JSON: the body is not valid UTF-8");
  }
  if (text.trim() === "") return null;
  const tooDeep = depthExceeded(text);
  if (tooDeep !== null) throw new JsonInvalid(tooDeep, `JSON decode error: nested more than ${MAX_DEPTH} levels deep`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // The engine's message quotes the offending text, which may be a password, and names no
    // position: `loc` is ["body", 0] then (docs/interface.md#errors).
    throw new JsonInvalid(0, "JSON decode error");
  }
  // Every body of this API is a JSON object (FastAPI: a model). Elysia would otherwise turn a
  // string, number or list into an empty object and report its fields as missing.
  if (value !== null && (typeof value !== "object" || Array.isArray(value))) {
    throw new RequestValidationError([
      { loc: ["body"], msg: "Input should be a valid dictionary or object to extract fields from", type: "model_attributes_type" },
    ]);
  }
  return value;
}

/**
 * No body of this API nests deeply. The bound also keeps a small body from costing seconds:
 * reporting a failure on a value thousands of levels deep is quadratic in its depth (the
 * validator's error message pretty-prints it).
 */
export const MAX_DEPTH = 64;

/** The offset of the bracket that opens level MAX_DEPTH + 1, or null. Strings are skipped. */
function depthExceeded(text: string): number | null {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_DEPTH) return codePoints(text, i);
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return null;
}

const codePoints = (text: string, end: number) => Array.from(text.slice(0, Math.min(end, text.length))).length;

/** A body that is not JSON: a one-item 422 (docs/interface.md#errors). */
export class JsonInvalid extends Error {
  constructor(
    readonly offset: number,
    readonly msg: string,
  ) {
    super(msg);
  }
}
