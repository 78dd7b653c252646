import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { noteSecret } from "../security/ledger";
import { ok, suite } from "./user-tenant-kit";

/**
 * A command that mails uses the server's settings: `--env-file` (the unit's EnvironmentFile) gives
 * the links their public address, the command's own environment wins over the file, and a link
 * built on the command's default address is named in a warning.
 */

const dir = mkdtempSync(join(tmpdir(), "suite-mail-settings-"));
const db = join(dir, "suite.db");
const envFile = join(dir, "suite.env");
writeFileSync(envFile, "# as deploy/suite.env.example\nSUITE_BASE_DOMAIN=suite.example.com\nSUITE_PUBLIC_URL=https://suite.example.com\n");
const PASSWORD = "quiet river stone lamp";
noteSecret("password", PASSWORD);
const SLOW = 120_000;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `suite tenant create`, SUITE_PUBLIC_URL unset ("" is unset) unless `env` sets it. */
const create = (sub: string, args: string[] = [], env: Record<string, string> = {}) =>
  suite(db, ["tenant", "create", "--name", `Org ${sub}`, "--subdomain", sub, "--admin-email", `admin@${sub}.test`, ...args], { env: { SUITE_NEW_PASSWORD: PASSWORD, SUITE_PUBLIC_URL: "", ...env } });

/** The origin of the newest pending mail's link to `to`, as `suite mail list` shows it. */
async function linkOriginTo(to: string): Promise<string> {
  const out = ok(await suite(db, ["mail", "list", "--env-file", envFile], { env: { SUITE_PUBLIC_URL: "" } }));
  const block = out.split(/\n(?=\S)/).find((b) => b.includes(`to ${to}`))!;
  const link = /link:\s+(\S+)/.exec(block)![1]!;
  return new URL(link).origin;
}

describe("mail from the command line", () => {
  test("without SUITE_PUBLIC_URL: the mailed link's address is named in one warning (its token is not)", async () => {
    const r = await create("acme");
    expect(r.code).toBe(0);
    const lines = r.stderr.split("\n").filter(Boolean);
    expect(lines).toEqual([
      "suite: warning: SUITE_PUBLIC_URL is not set: the link mailed to admin@acme.test points at http://acme.localhost:8000, from this command's default http://localhost:8000; " +
        "set SUITE_PUBLIC_URL in /etc/suite/suite.env (the server's settings file) or give --env-file or --public-url",
    ]);
    expect(await linkOriginTo("admin@acme.test")).toBe("http://acme.localhost:8000");
  }, SLOW);

  test("--env-file: the link is on the server's public address, and no warning", async () => {
    const r = await create("beta", ["--env-file", envFile]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(await linkOriginTo("admin@beta.test")).toBe("https://beta.suite.example.com");
  }, SLOW);

  test("a variable in the command's own environment wins over the file", async () => {
    ok(await create("gamma", ["--env-file", envFile], { SUITE_PUBLIC_URL: "https://other.example.org" }));
    expect(await linkOriginTo("admin@gamma.test")).toBe("https://gamma.other.example.org");
  }, SLOW);

  test("--env-file that does not exist stops the command before anything is created (exit 78)", async () => {
    const r = await create("delta", ["--env-file", join(dir, "missing.env")]);
    expect(r.code).toBe(78);
    expect(r.stderr.trim()).toBe(`suite: cannot read --env-file ${join(dir, "missing.env")}: no such file`);
    expect(ok(await suite(db, ["tenant", "list"]))).not.toContain("delta");
  }, SLOW);
});
