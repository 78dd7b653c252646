import { expect } from "bun:test";
import { noteLog } from "../security/ledger";
import { BUN, MAIN, type Run, runSuite } from "./kit";

/** Shared by the `suite user …` and `suite tenant …` tests: the command line as a subprocess. */

export type { Run } from "./kit";

/**
 * Runs `bun src/main.ts ...args` on `db`, with only the given settings (none of the runner's
 * SUITE_*); `stdin` is piped in. SUITE_PUBLIC_URL is the default address spelt out, so that a
 * command that mails does not warn about it (tests/cli/mail-settings.test.ts unsets it with "").
 */
export const suite = (db: string, args: string[], o: { env?: Record<string, string>; stdin?: string } = {}): Promise<Run> =>
  runSuite(args, { cwd: "/tmp", env: { SUITE_DB: db, SUITE_PUBLIC_URL: "http://localhost:8000", ...o.env }, stdin: o.stdin });

/** Success: exit 0 and nothing on stderr. Answers stdout. */
export function ok(r: Run): string {
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return r.stdout;
}

/** A failure with this exit code, in one line on stderr (no stack trace); answers the line. */
export function fails(r: Run, code: number): string {
  expect(r.stdout).toBe("");
  expect(r.code).toBe(code);
  const lines = r.stderr.split("\n").filter(Boolean);
  expect(lines).toHaveLength(1);
  expect(lines[0]!.startsWith("suite: ")).toBe(true);
  return lines[0]!;
}

/** The table's rows as objects keyed by its header, each cell cut at its header's column and trimmed. */
export function tableRows(stdout: string): Record<string, string>[] {
  const [header, ...lines] = stdout.split("\n").filter(Boolean);
  const starts = [...header!.matchAll(/\S+(?: \S+)*/g)].map((m) => ({ name: m[0], at: m.index! }));
  return lines.map((l) => Object.fromEntries(starts.map((c, i) => [c.name, l.slice(c.at, starts[i + 1]?.at).trim()])));
}

/**
 * Runs the command at a terminal (a pseudo-terminal from util-linux's `script`), answering each
 * prompt in `answers` once it shows: the interactive path of `suite user reset-password`.
 * Answers everything the terminal displayed (what was typed would show there, if echoed).
 */
export async function suiteAtTerminal(db: string, args: string[], answers: Array<[prompt: string, typed: string]>): Promise<{ code: number; screen: string }> {
  const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  const command = [BUN, MAIN, ...args].map(quote).join(" ");
  const p = Bun.spawn(["script", "-qfec", command, "/dev/null"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp", SUITE_DB: db, SUITE_HASH_CONCURRENCY: "2", TERM: "dumb" },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  let screen = "";
  const decoder = new TextDecoder();
  const reader = p.stdout.getReader();
  for (const [prompt, typed] of answers) {
    while (!screen.includes(prompt)) {
      const { value, done } = await reader.read();
      if (done) break;
      screen += decoder.decode(value);
    }
    screen = screen.replace(prompt, `${prompt}[answered]`);
    p.stdin.write(`${typed}\r`);
    p.stdin.flush();
  }
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    screen += decoder.decode(value);
  }
  p.stdin.end();
  const code = await p.exited;
  noteLog(screen);
  return { code, screen };
}
