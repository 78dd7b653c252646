import { expect } from "bun:test";
import { noteSecret } from "../security/ledger";
import { type Run, runSuite } from "./kit";

/** What the backup and restore tests share: running `suite` from source, and one-line failures. */

export type { Run } from "./kit";

/** `bun src/main.ts ...args` with only the given settings (none of the runner's SUITE_*). */
export const run = (args: string[], env: Record<string, string> = {}, cwd = "/tmp"): Promise<Run> => runSuite(args, { cwd, env });

/** A failure: non-zero, exactly one line on stderr, no stack trace; answers that line. */
export function oneLineFailure(r: Run): string {
  expect(r.code).not.toBe(0);
  expect(r.stderr.split("\n").filter(Boolean)).toHaveLength(1);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr.startsWith("suite: ")).toBe(true);
  return r.stderr.trim();
}

export const PASSWORD = "backup test passphrase";
noteSecret("password", PASSWORD);

/** `suite tenant create` for organization `sub` (admin admin@<sub>.test) in the database `db`. */
export async function createTenant(db: string, sub: string): Promise<void> {
  const r = await run(["tenant", "create", "--name", `Org ${sub}`, "--subdomain", sub, "--admin-email", `admin@${sub}.test`], { SUITE_DB: db, SUITE_NEW_PASSWORD: PASSWORD, SUITE_PUBLIC_URL: "http://localhost:8000" });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
}

export const mode = (st: { mode: number }) => st.mode & 0o777;
