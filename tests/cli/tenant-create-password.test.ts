import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { noteSecret } from "../security/ledger";
import { freePort } from "../server";
import { BUN, MAIN } from "./kit";
import { fails, ok, suite, suiteAtTerminal } from "./user-tenant-kit";

/**
 * `suite tenant create` takes the admin's password from a prompt, SUITE_NEW_PASSWORD (or the older
 * SUITE_ADMIN_PASSWORD) or stdin, never from an option (every user of the machine reads `ps`).
 * And every command ends quietly when its reader goes away (`suite backup … | head -1`).
 */

const dir = mkdtempSync(join(tmpdir(), "suite-create-pw-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshDb = () => join(dir, `d${++n}`, "suite.db");
const SLOW = 120_000;
const PASSWORD = "the first owner's passphrase";
noteSecret("password", PASSWORD);

const create = (sub: string) => ["tenant", "create", "--name", `Org ${sub}`, "--subdomain", sub, "--admin-email", `admin@${sub}.test`];

/** Whether the admin of `sub` exists and `password` is theirs. */
async function adminHas(db: string, sub: string, password: string): Promise<boolean> {
  if (!existsSync(db)) return false;
  const d = new Database(db, { readonly: true });
  try {
    const row = d.query("SELECT password_hash FROM users WHERE email = ?1").get(`admin@${sub}.test`) as { password_hash: string } | null;
    return row !== null && (await Bun.password.verify(password, row.password_hash));
  } finally {
    d.close();
  }
}

const tenantCount = (db: string): number => {
  if (!existsSync(db)) return 0;
  const d = new Database(db, { readonly: true });
  try {
    return (d.query("SELECT count(*) AS n FROM tenants").get() as { n: number }).n;
  } finally {
    d.close();
  }
};

describe("suite tenant create: the admin's password", () => {
  test("--admin-password is refused with a sentence saying why, and nothing is created", async () => {
    const db = freshDb();
    const line = fails(await suite(db, [...create("acme"), "--admin-password", PASSWORD], { env: { SUITE_NEW_PASSWORD: PASSWORD } }), 64);
    expect(line).toContain("never given as an option");
    expect(line).toContain("ps");
    expect(line).toContain("nothing was created");
    expect(line).not.toContain(PASSWORD);
    expect(tenantCount(db)).toBe(0);
  }, SLOW);

  test("a common password, or one holding the organization's name, is refused with the sentence why; nothing is created", async () => {
    const db = freshDb();
    expect(fails(await suite(db, create("acme"), { env: { SUITE_NEW_PASSWORD: "Qwerty123456" } }), 64)).toContain("list of common or leaked passwords");
    expect(fails(await suite(db, create("acme"), { env: { SUITE_NEW_PASSWORD: "Org acme forever" } }), 64)).toContain("organization's name");
    expect(tenantCount(db)).toBe(0);
  }, SLOW);

  test("from SUITE_NEW_PASSWORD, from the older SUITE_ADMIN_PASSWORD, and from stdin", async () => {
    const db = freshDb();
    expect(ok(await suite(db, create("envorg"), { env: { SUITE_NEW_PASSWORD: PASSWORD } }))).toContain("created tenant envorg");
    expect(await adminHas(db, "envorg", PASSWORD)).toBe(true);
    ok(await suite(db, create("oldenv"), { env: { SUITE_ADMIN_PASSWORD: PASSWORD } }));
    expect(await adminHas(db, "oldenv", PASSWORD)).toBe(true);
    ok(await suite(db, create("piped"), { stdin: `${PASSWORD}\nignored\n` }));
    expect(await adminHas(db, "piped", PASSWORD)).toBe(true);
  }, SLOW);

  test("at a terminal: asked twice without echo", async () => {
    const db = freshDb();
    const r = await suiteAtTerminal(db, create("ttyorg"), [["New password:", PASSWORD], ["Repeat it:", PASSWORD]]);
    expect(r.screen).toContain("created tenant ttyorg");
    expect(r.screen).not.toContain(PASSWORD);
    expect(r.code).toBe(0);
    expect(await adminHas(db, "ttyorg", PASSWORD)).toBe(true);
  }, SLOW);

  test("no password, or one the policy refuses: one line, nothing created; option typos are said first", async () => {
    const db = freshDb();
    expect(fails(await suite(db, create("nopw")), 64)).toContain("no new password");
    expect(fails(await suite(db, create("short"), { env: { SUITE_NEW_PASSWORD: "short" } }), 64)).toContain("the admin's password");
    // A bad subdomain is reported although no password was given at all.
    expect(fails(await suite(db, create("-x")), 64)).toContain("--subdomain");
    expect(tenantCount(db)).toBe(0);
  }, SLOW);
});

describe("a reader that goes away", () => {
  /** Runs `suite ARGS | reader that closes at once`, answering suite's exit code and stderr. */
  async function intoClosedPipe(args: string[], env: Record<string, string>): Promise<{ code: number; stderr: string }> {
    const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
    const errFile = join(dir, `stderr-${++n}`);
    const script = `${[BUN, MAIN, ...args].map(quote).join(" ")} 2>${quote(errFile)} | (exec 0<&-; sleep 2); echo "\${PIPESTATUS[0]}"`;
    const p = Bun.spawn(["bash", "-c", script], { cwd: dir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, SUITE_HASH_CONCURRENCY: "2", ...env }, stdout: "pipe", stderr: "pipe" });
    const code = Number((await new Response(p.stdout).text()).trim());
    await p.exited;
    return { code, stderr: readFileSync(errFile, "utf8") };
  }

  test("suite backup, help, tenant list and serve end quietly on EPIPE", async () => {
    const db = freshDb();
    ok(await suite(db, create("pipes"), { env: { SUITE_NEW_PASSWORD: PASSWORD } }));
    const env = { SUITE_DB: db };
    for (const args of [["backup", join(dir, "piped-backup.db")], ["help"], ["tenant", "list"], ["serve", "--port", String(await freePort())]]) {
      const r = await intoClosedPipe(args, env);
      expect({ args, ...r }).toEqual({ args, code: 0, stderr: "" });
    }
    expect(existsSync(join(dir, "piped-backup.db"))).toBe(true);
  }, SLOW);
});
