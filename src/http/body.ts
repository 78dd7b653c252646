import { errors } from "./errors";

export const MAX_BODY_BYTES = 1024 * 1024;

/** Refuses, before reading a byte, a body that announces itself as too large. */
export function checkDeclaredLength(request: Request): void {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > MAX_BODY_BYTES) throw errors.payloadTooLarge();
}

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
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new JsonInvalid(errorOffset(e, text), `JSON decode error: ${(e as Error).message.replace(/^JSON Parse error: /, "")}`);
  }
}

/** The character offset of a JSON syntax error when the engine tells it, else 0. */
function errorOffset(e: unknown, text: string): number {
  const m = /position (\d+)/.exec(String((e as Error)?.message));
  if (m) return Math.min(Number(m[1]), text.length);
  return 0;
}

/** A body that is not JSON: CONTRACT §1 answers it with a one-item 422. */
export class JsonInvalid extends Error {
  constructor(
    readonly offset: number,
    readonly msg: string,
  ) {
    super(msg);
  }
}
