import { Glob } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The error codes the source can produce, read from it (tests/http/error-codes.test.ts, openapi-tools.test.ts). */

export const SRC = join(import.meta.dir, "../../src");
export const files = [...new Glob("**/*.ts").scanSync(SRC)].map((f) => ({ path: f, text: readFileSync(join(SRC, f), "utf8") }));

export interface Site {
  file: string;
  line: number;
  status: number | null;
  code: string | null;
}

const lineOf = (text: string, index: number) => text.slice(0, index).split("\n").length;

/** Every `new AppError(status, "code"` in src/, with null where the code is not a string literal. */
export function constructions(): Site[] {
  const sites: Site[] = [];
  for (const { path, text } of files) {
    for (const m of text.matchAll(/new AppError\(/g)) {
      const literal = /^new AppError\(\s*(\d{3})\s*,\s*"([^"\\]*)"\s*,/.exec(text.slice(m.index));
      sites.push({ file: path, line: lineOf(text, m.index), status: literal ? Number(literal[1]) : null, code: literal ? literal[2]! : null });
    }
  }
  return sites;
}

/** Every `errors.conflict("code"` in src/ (the one factory that takes its code from its caller). */
export function conflicts(): Site[] {
  const sites: Site[] = [];
  for (const { path, text } of files) {
    for (const m of text.matchAll(/errors\.conflict\(/g)) {
      const literal = /^errors\.conflict\(\s*"([^"\\]*)"\s*,/.exec(text.slice(m.index));
      sites.push({ file: path, line: lineOf(text, m.index), status: 409, code: literal ? literal[1]! : null });
    }
  }
  return sites;
}

/** Every literal code in the source. */
export const catalogue = (): Set<string> => new Set([...constructions(), ...conflicts()].flatMap((s) => (s.code === null ? [] : [s.code])));
