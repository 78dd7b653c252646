import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testApp } from "../helpers";
import { askLink, tokenOf, verifyToken } from "../auth/magic-link/support";
import { noteLog } from "../security/ledger";
import { startSmtp } from "./smtp-support";
import { freePort } from "../server";
import { testSql } from "../support/sql";

const BUN = process.execPath;
const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
const dir = mkdtempSync(join(tmpdir(), "suite-mail-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ENV = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, SUITE_HASH_CONCURRENCY: "2" };

function spawn(args: string[], env: Record<string, string>) {
  return Bun.spawn([BUN, MAIN, ...args], { cwd: dir, env: { ...ENV, ...env }, stdout: "pipe", stderr: "pipe" });
}

async function run(args: string[], env: Record<string, string>) {
  const p = spawn(args, env);
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  // `suite mail list` prints pending links by design; it is a command's answer, not a log.
  if (args[0] !== "mail") {
    noteLog(stdout);
    noteLog(stderr);
  }
  return { code, stdout, stderr };
}

describe("suite mail list, and delivery of the backlog by suite serve", () => {
  test("lists a pending link; serve delivers it at start; the list then shows it sent, without the link", async () => {
    const db = join(dir, "suite.db");
    const t = testApp({ db, env: { SUITE_PUBLIC_URL: "http://localhost:8000" } });
    const org = await t.signup("acme");
    // Signup's verification mail is not what this test follows.
    await testSql(t.ctx).run("DELETE FROM mail_outbox WHERE kind = 'email_verification'");
    expect((await askLink(t, org.email, { tenant: "acme" })).status).toBe(202);
    t.close();

    const listed = await run(["mail", "list", "--db", db], {});
    expect(listed.stderr).toBe("");
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`pending  magic_link  to ${org.email}`);
    expect(listed.stdout).toContain("subject: Your sign-in link for Org acme");
    const link = /link: +(\S+)/.exec(listed.stdout)?.[1];
    expect(link?.startsWith("http://acme.localhost:8000/magic-link#token=")).toBe(true);

    // No SMTP until now: `suite serve` with SMTP sends what waited in the outbox.
    const smtp = await startSmtp();
    const server = spawn(["serve"], { SUITE_DB: db, SUITE_HOST: "127.0.0.1", SUITE_PORT: String(freePort()), SUITE_SMTP_URL: smtp.url });
    try {
      const [mail] = await smtp.waitFor(1, 10_000);
      expect(mail!.to).toEqual([org.email]);
      expect(mail!.text).toContain(link!);
      server.kill("SIGTERM");
      expect(await server.exited).toBe(0);
      const out = await new Response(server.stdout).text();
      noteLog(out);
      expect(out).toContain('"msg":"mail sent"');
      expect(out).not.toContain(tokenOf(link!));
    } finally {
      if (server.exitCode === null) server.kill("SIGKILL");
      await smtp.close();
    }

    const after = await run(["mail", "list", "--limit", "5"], { SUITE_DB: db });
    expect(after.stdout).toContain(`sent     magic_link  to ${org.email}`);
    expect(after.stdout).not.toContain("link:");
    expect(after.stdout).not.toContain(tokenOf(link!));

    // The operator's copy of the link signs the user in.
    const again = testApp({ db });
    try {
      expect((await verifyToken(again, tokenOf(link!), { tenant: "acme" })).status).toBe(200);
    } finally {
      again.close();
    }
  });

  test("usage mistakes and a missing database fail in one line", async () => {
    const bad = await run(["mail", "list", "--limit", "0"], { SUITE_DB: join(dir, "suite.db") });
    expect(bad.code).toBe(64);
    expect(bad.stderr).toBe("suite: --limit expects a whole number from 1 to 10000\n");
    const sub = await run(["mail", "send"], {});
    expect(sub.code).toBe(64);
    expect(sub.stderr).toContain("usage: suite mail list");
    const none = await run(["mail", "list"], { SUITE_DB: join(dir, "absent", "x.db") });
    expect(none.code).toBe(64);
    expect(none.stderr.trim()).toMatch(/^suite: no database at /);
  });
});
