import { expect } from "bun:test";
import { join } from "node:path";
import { noteLog } from "../security/ledger";

/** Running `bun src/main.ts ...` as an operator would, with only the environment given. */

export const BUN = process.execPath;
export const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `prefix`: what runs the command (e.g. setpriv, to run it as another user). */
export async function runSuite(
  args: string[],
  opts: { cwd: string; env?: Record<string, string>; prefix?: string[]; bun?: string; main?: string; stdin?: string },
): Promise<Run> {
  const p = Bun.spawn([...(opts.prefix ?? []), opts.bun ?? BUN, opts.main ?? MAIN, ...args], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: opts.cwd, SUITE_HASH_CONCURRENCY: "2", ...opts.env },
    stdin: opts.stdin === undefined ? "ignore" : new Blob([opts.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  noteLog(stdout);
  noteLog(stderr);
  return { code, stdout, stderr };
}

export const lines = (s: string) => s.split("\n").filter((l) => l.length > 0);

/** A failure: the exit code, exactly one line on stderr starting "suite: ", no stack trace; returns the line. */
export function oneLineFailure(r: Run, code: number): string {
  expect({ code: r.code, lines: lines(r.stderr).length }).toEqual({ code, lines: 1 });
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr.startsWith("suite: ")).toBe(true);
  return r.stderr.trim();
}
