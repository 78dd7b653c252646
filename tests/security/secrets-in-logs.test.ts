import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appCode } from "../auth/two-factor/rfc6238";
import { startSmtp } from "../mail/smtp-support";
import { noteLog, noteSecret } from "./ledger";
import { freePort } from "../server";

/**
 * The whole sign-in story against a real `suite serve` with real SMTP: signup, login, 2FA setup,
 * confirm and challenge, a magic link, an invitation and its acceptance, refresh and sign-out.
 * Every secret met on the way (passwords, tokens, cookies, the TOTP secret, codes, backup codes,
 * mailed links and their tokens) is then searched for in everything the server wrote to stdout
 * and stderr, and in the audit table: none may be there.
 */

const BUN = process.execPath;
const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
const dir = mkdtempSync(join(tmpdir(), "suite-secrets-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("no password, token, cookie, code, secret or mailed link reaches the log or the audit table", async () => {
  const smtp = await startSmtp();
  const port = freePort();
  const db = join(dir, "suite.db");
  const server = Bun.spawn([BUN, MAIN, "serve"], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: dir,
      SUITE_DB: db,
      SUITE_HOST: "127.0.0.1",
      SUITE_PORT: String(port),
      SUITE_SMTP_URL: smtp.url,
      SUITE_PUBLIC_URL: `http://localhost:${port}`,
      SUITE_HASH_CONCURRENCY: "2",
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const secrets = new Map<string, string>();
  /** The first mail (within 10 s) whose text holds a link to `path`. */
  const mailWith = async (path: string) => {
    for (const until = Date.now() + 10_000; Date.now() < until; await Bun.sleep(10)) {
      const found = smtp.received.find((m) => m.text.includes(`${path}#token=`));
      if (found) return found;
    }
    throw new Error(`no mail with a ${path} link`);
  };
  const keep = (what: string, value: unknown) => {
    expect(typeof value).toBe("string");
    secrets.set(what, value as string);
    noteSecret("real-server flow", value);
    return value as string;
  };
  const cookiesOf = (r: Response) => r.headers.getSetCookie().map((c) => c.split(";")[0]!);

  const call = async (method: string, path: string, o: { body?: unknown; token?: string; tenant?: string; cookie?: string } = {}) => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.tenant) headers["x-tenant"] = o.tenant;
    if (o.cookie) {
      headers.cookie = o.cookie;
      headers.origin = `http://localhost:${port}`;
    }
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
    for (const [i, c] of cookiesOf(res).entries()) if (!c.endsWith("=")) keep(`cookie ${path} ${i}`, c.slice(c.indexOf("=") + 1));
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, res };
  };

  try {
    for (let i = 0; i < 100; i++) {
      if ((await fetch(`http://127.0.0.1:${port}/api/v1/health`).catch(() => null))?.ok) break;
      await Bun.sleep(50);
    }
    const adminPassword = keep("admin password", "admin's long passphrase");
    const signup = await call("POST", "/api/v1/auth/signup", {
      body: { email: "owner@acme.test", password: adminPassword, tenant_name: "Acme", subdomain: "acme" },
    });
    expect(signup.status).toBe(201);
    keep("signup access", signup.body.access_token);
    keep("signup refresh", signup.body.refresh_token);

    const wrong = await call("POST", "/api/v1/auth/login", { body: { email: "owner@acme.test", password: keep("wrong password", "not the password at all") } });
    expect(wrong.status).toBe(401);
    const login = await call("POST", "/api/v1/auth/login", { body: { email: "owner@acme.test", password: adminPassword } });
    expect(login.status).toBe(200);
    const access = keep("login access", login.body.access_token);
    keep("login refresh", login.body.refresh_token);

    // Second factor: setup, a wrong code, confirm, then a challenge answered by TOTP and by a backup code.
    const setup = await call("POST", "/api/v1/auth/2fa/setup", { token: access });
    expect(setup.status).toBe(200);
    const secret = keep("totp secret", setup.body.secret);
    keep("otpauth url", setup.body.otpauth_url);
    setup.body.backup_codes.forEach((c: string, i: number) => keep(`backup code ${i}`, c));
    const confirmCode = keep("confirm code", appCode(secret, Date.now()));
    expect((await call("POST", "/api/v1/auth/2fa/confirm", { token: access, body: { code: confirmCode } })).status).toBe(200);

    const challenge = await call("POST", "/api/v1/auth/login", { body: { email: "owner@acme.test", password: adminPassword } });
    expect(challenge.body.requires_2fa).toBe(true);
    const temp = keep("temp token", challenge.body.temp_token);
    const badCode = keep("wrong code", String((Number(appCode(secret, Date.now(), 1)) + 1) % 1_000_000).padStart(6, "0"));
    expect((await call("POST", "/api/v1/auth/2fa/verify", { body: { temp_token: temp, code: badCode } })).status).toBe(401);
    const nextCode = keep("verify code", appCode(secret, Date.now(), 1));
    const verified = await call("POST", "/api/v1/auth/2fa/verify", { body: { temp_token: temp, code: nextCode } });
    expect(verified.status).toBe(200);
    keep("2fa access", verified.body.access_token);
    const refreshToken = keep("2fa refresh", verified.body.refresh_token);

    // Refresh by body, and by cookie.
    const refreshed = await call("POST", "/api/v1/auth/refresh", { body: { refresh_token: refreshToken } });
    expect(refreshed.status).toBe(200);
    keep("refreshed access", refreshed.body.access_token);
    keep("refreshed refresh", refreshed.body.refresh_token);

    // A magic link, mailed over SMTP, answered by the 2FA challenge and a backup code.
    expect((await call("POST", "/api/v1/auth/magic-link", { body: { email: "owner@acme.test" }, tenant: "acme" })).status).toBe(202);
    // Signup's verification mail and new-device mails come too: the link's is the one to /magic-link.
    const magicMail = await mailWith("/magic-link");
    const magicLink = keep("magic link", /https?:\/\/\S+#token=[^\s"<]+/.exec(magicMail!.text)![0]);
    const magicToken = keep("magic token", decodeURIComponent(magicLink.split("#token=")[1]!));
    const magic = await call("POST", "/api/v1/auth/magic-verify", { body: { token: magicToken }, tenant: "acme" });
    expect(magic.body.requires_2fa).toBe(true);
    const magicTemp = keep("magic temp token", magic.body.temp_token);
    const byBackup = await call("POST", "/api/v1/auth/2fa/verify", { body: { temp_token: magicTemp, code: setup.body.backup_codes[0] } });
    expect(byBackup.status).toBe(200);
    const admin = keep("backup access", byBackup.body.access_token);

    // An invitation, mailed, accepted by a new member who then signs in.
    expect((await call("POST", "/api/v1/users/invite", { token: admin, body: { email: "new@acme.test" } })).status).toBe(201);
    const inviteMail = await mailWith("/accept-invitation");
    const inviteLink = keep("invite link", /https?:\/\/\S+#token=[^\s"<]+/.exec(inviteMail!.text)![0]);
    const inviteToken = keep("invite token", decodeURIComponent(inviteLink.split("#token=")[1]!));
    const memberPassword = keep("member password", "the member's own passphrase");
    const accepted = await call("POST", "/api/v1/auth/invitations/accept", { body: { token: inviteToken, password: memberPassword, full_name: "New Member" } });
    expect(accepted.status).toBe(201);
    keep("accept access", accepted.body.access_token);
    const member = await call("POST", "/api/v1/auth/login", { body: { email: "new@acme.test", password: memberPassword }, tenant: "acme" });
    expect(member.status).toBe(200);
    const memberCookies = cookiesOf(member.res).join("; ");
    expect((await call("GET", "/api/v1/auth/sessions", { cookie: memberCookies })).status).toBe(200);

    // Disable 2FA with the password and a backup code; sign out everywhere.
    const disabled = await call("POST", "/api/v1/auth/2fa/disable", { token: admin, body: { password: adminPassword, code: setup.body.backup_codes[1] } });
    expect(disabled.status).toBe(200);
    expect((await call("POST", "/api/v1/auth/logout-all", { token: admin })).status).toBe(200);
    // The new-device mails' "this wasn't me" links (the first sign-ins of the owner and the member).
    const notMe = smtp.received.map((m) => /https?:\/\/\S+\/not-me#token=[^\s"<]+/.exec(m.text)?.[0]).filter((l): l is string => !!l);
    expect(notMe.length).toBeGreaterThanOrEqual(2);
    notMe.forEach((l, i) => keep(`not-me link ${i}`, l));
  } finally {
    server.kill("SIGTERM");
    await server.exited;
    await smtp.close();
  }

  const output = (await new Response(server.stdout).text()) + (await new Response(server.stderr).text());
  noteLog(output);
  expect(output).toContain('"path":"/api/v1/auth/2fa/verify"'); // the log was captured, and it logs these requests
  const audit = new Database(db, { readonly: true });
  const rows = JSON.stringify(audit.query("SELECT * FROM audit_log").all());
  const outbox = JSON.stringify(audit.query("SELECT * FROM mail_outbox").all());
  audit.close();
  expect(rows).toContain("2fa.enabled");

  expect(secrets.size).toBeGreaterThan(30);
  const leaks: string[] = [];
  for (const [what, value] of secrets) {
    // A 6-digit code counts only as a whole number, not inside a longer one (timestamps, ids).
    const pattern = /^\d{6}$/.test(value) ? new RegExp(`(?<!\\d)${value}(?!\\d)`) : null;
    const found = (text: string) => (pattern ? pattern.test(text) : text.includes(value));
    if (found(output)) leaks.push(`${what} in the server's output`);
    if (found(rows)) leaks.push(`${what} in the audit table`);
    if (found(outbox)) leaks.push(`${what} in the sent outbox`);
  }
  expect(leaks).toEqual([]);
}, 60_000);
