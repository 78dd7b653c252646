import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json";
import { noteSecret } from "../security/ledger";
import { startServer } from "../server";
import { lines } from "./kit";

/** Issue 18, item 2: the first lines `suite serve` logs tell a new operator where things are and what to do next. */

const dir = mkdtempSync(join(tmpdir(), "suite-first-run-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshDb = () => join(dir, `db-${++n}`, "suite.db");

type Line = Record<string, unknown>;

/** Starts a server, lets `during` use it, stops it, and returns its log lines. */
async function serveLog(db: string, env: Record<string, string> = {}, during?: (s: Awaited<ReturnType<typeof startServer>>) => Promise<void>): Promise<Line[]> {
  const s = await startServer(db, env);
  let stopped: { code: number; stdout: string; stderr: string };
  try {
    await during?.(s);
  } finally {
    stopped = await s.stop();
  }
  expect(stopped.code).toBe(0);
  expect(stopped.stderr).toBe("");
  return lines(stopped.stdout).map((l) => JSON.parse(l) as Line);
}

const NEXT_STEP = "`suite tenant create --name N --subdomain S --admin-email E` (the password at its prompt, or from SUITE_NEW_PASSWORD or stdin)";

describe("suite serve's first lines", () => {
  test("on a new database: where it listens (and which version), the web app, the API reference, mail in the outbox, and how to create an organization", async () => {
    const db = freshDb();
    let base = "";
    const log = await serveLog(db, {}, async (s) => {
      base = s.url.replace("127.0.0.1", "localhost");
      // The addresses named are the ones that answer: the reference page and its document.
      const docs = await s.call("GET", "/api/v1/docs");
      expect(docs.status).toBe(200);
      expect(docs.text).toContain("/api/v1/openapi.json");
      expect((await s.call("GET", "/api/v1/openapi.json")).status).toBe(200);
    });
    const first = log.slice(0, 5).map(({ time, ...rest }) => (expect(typeof time).toBe("string"), rest));
    expect(first).toEqual([
      { level: "info", msg: "listening", version: pkg.version, url: base.replace("localhost", "127.0.0.1"), db },
      { level: "info", msg: "web app", url: `${base}/` },
      { level: "info", msg: "API reference", url: `${base}/api/v1/docs`, openapi: `${base}/api/v1/openapi.json` },
      { level: "info", msg: "no SMTP: mails wait in the outbox, see `suite mail list` (set SUITE_SMTP_URL to send them)" },
      { level: "info", msg: `no organization yet: create one at ${base}/ or with ${NEXT_STEP}` },
    ]);
  }, 60_000);

  test("with SMTP: the mail server's address without its credentials; the public URL is the address named", async () => {
    const password = "smtp-first-run-pass-Zq81";
    noteSecret("password", password);
    const log = await serveLog(freshDb(), { SUITE_SMTP_URL: `smtp://mailer:${password}@127.0.0.1:2525`, SUITE_PUBLIC_URL: "https://suite.example.com" });
    const msgs = log.slice(1, 5);
    expect(msgs[0]).toMatchObject({ msg: "web app", url: "https://suite.example.com/" });
    expect(msgs[1]).toMatchObject({ msg: "API reference", url: "https://suite.example.com/api/v1/docs" });
    expect(msgs[2]).toMatchObject({ msg: "mail goes out over SMTP", smtp: "smtp://127.0.0.1:2525" });
    expect(msgs[3]).toMatchObject({ msg: `no organization yet: create one at https://suite.example.com/ or with ${NEXT_STEP}` });
    expect(JSON.stringify(log)).not.toContain(password);
    expect(JSON.stringify(log)).not.toContain("mailer");
  }, 60_000);

  test("with signup closed the next step is the command alone; once an organization exists there is no next step", async () => {
    const db = freshDb();
    const closed = await serveLog(db, { SUITE_SIGNUP: "closed" });
    expect(closed[4]).toMatchObject({ msg: `no organization yet, and signup is closed: create one with ${NEXT_STEP}` });
    const password = "first run passphrase";
    noteSecret("password", password);
    await serveLog(db, {}, async (s) => {
      const r = await s.call("POST", "/api/v1/auth/signup", { body: { email: "a@acme.io", password, tenant_name: "Acme", subdomain: "acme" } });
      expect(r.status).toBe(201);
    });
    const later = await serveLog(db);
    expect(later.slice(0, 4).map((l) => l.msg)).toEqual(["listening", "web app", "API reference", "no SMTP: mails wait in the outbox, see `suite mail list` (set SUITE_SMTP_URL to send them)"]);
    expect(later.some((l) => String(l.msg).startsWith("no organization yet"))).toBe(false);
  }, 60_000);
});
