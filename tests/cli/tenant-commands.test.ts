import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { noteSecret } from "../security/ledger";
import { openMailOfFile } from "../support/outbox";
import { type Server, startServer } from "../server";
import { fails, ok, suite, tableRows } from "./user-tenant-kit";

/**
 * `suite tenant list|disable|enable` while a real `suite serve` serves the same file: the server
 * sees a disable at its next request (no cache hides it), and an enable gives everything back.
 */

const dir = mkdtempSync(join(tmpdir(), "suite-tenant-cli-"));
const db = join(dir, "suite.db");
const PASSWORD = "tenant owner password";
const NEW_PASSWORD = "after the reset link";
noteSecret("password", PASSWORD);
noteSecret("password", NEW_PASSWORD);
let server: Server;

const create = (sub: string) =>
  suite(db, ["tenant", "create", "--name", `Org ${sub}`, "--subdomain", sub, "--admin-email", `admin@${sub}.test`], { env: { SUITE_NEW_PASSWORD: PASSWORD } });
const login = (sub: string, named = true) =>
  server.call("POST", "/api/v1/auth/login", { body: { email: `admin@${sub}.test`, password: PASSWORD }, tenant: named ? sub : undefined });

/** Subprocesses and password hashes on a shared 2-core machine: generous, never a timing assertion. */
const SLOW = 120_000;

/** The token of the newest password-reset mail in the outbox. */
async function mailedResetToken(): Promise<string> {
  const d = new Database(db, { readonly: true });
  try {
    // Sealed in the file (src/mail/outbox-seal.ts): opened with the key file, as the sender does.
    const row = openMailOfFile(db, d.query("SELECT id, link FROM mail_outbox WHERE kind = 'password_reset' ORDER BY rowid DESC LIMIT 1").get() as { id: string; link: string });
    noteSecret("mailed link", row.link);
    return decodeURIComponent(/token=([^&]+)/.exec(new URL(row.link).hash)![1]!);
  } finally {
    d.close();
  }
}

beforeAll(async () => {
  ok(await create("acme"));
  ok(await create("beta"));
  server = await startServer(db);
}, SLOW);
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("suite tenant list", () => {
  test("every organization: subdomain, name, members, created, disabled", async () => {
    const rows = tableRows(ok(await suite(db, ["tenant", "list"])));
    expect(rows.map((r) => r.SUBDOMAIN)).toEqual(["acme", "beta"]);
    expect(rows[0]).toMatchObject({ NAME: "Org acme", MEMBERS: "1", DISABLED: "" });
    expect(rows[0]!.CREATED).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
  }, SLOW);
});

describe("suite tenant disable / enable, while the server runs", () => {
  test("a disabled organization answers 403 tenant_disabled to its sessions and sign-in at once, keeps its data, and enable restores it", async () => {
    const signedIn = await login("acme");
    expect(signedIn.status).toBe(200);
    const { access_token, refresh_token } = signedIn.body as { access_token: string; refresh_token: string };
    const me = () => server.call("GET", "/api/v1/auth/me", { token: access_token });
    const accounts = () => server.call("POST", "/api/v1/crm/accounts", { token: access_token, tenant: "acme", body: { name: "Kept Ltd" } });
    expect((await accounts()).status).toBe(201);
    const betaToken = (await login("beta")).body.access_token as string;
    // A password-reset link mailed before the disable (read from the outbox, as the user's mailbox would).
    expect((await server.call("POST", "/api/v1/auth/password/forgot", { body: { email: "admin@acme.test" }, tenant: "acme" })).status).toBe(202);
    const resetToken = await mailedResetToken();

    const out = ok(await suite(db, ["tenant", "disable", "acme"]));
    expect(out).toContain("disabled acme");

    // The very next requests, on the server that was already running.
    for (const r of [await me(), await accounts(), await login("acme"), await login("acme", false)]) {
      expect(r.status).toBe(403);
      expect(r.body.code).toBe("tenant_disabled");
    }
    const refreshed = await server.call("POST", "/api/v1/auth/refresh", { body: { refresh_token } });
    expect(refreshed.status).toBe(403);
    expect(refreshed.body.code).toBe("tenant_disabled");
    const magic = await server.call("POST", "/api/v1/auth/magic-link", { body: { email: "admin@acme.test" }, tenant: "acme" });
    expect(magic.body.code).toBe("tenant_disabled");
    const reset = await server.call("POST", "/api/v1/auth/password/reset", { body: { token: resetToken, password: NEW_PASSWORD } });
    expect(reset.status).toBe(403);
    expect(reset.body.code).toBe("tenant_disabled");
    // Other organizations carry on.
    expect((await server.call("GET", "/api/v1/auth/me", { token: betaToken })).status).toBe(200);
    expect((await login("beta")).status).toBe(200);

    const listed = tableRows(ok(await suite(db, ["tenant", "list"]))).find((r) => r.SUBDOMAIN === "acme");
    expect(listed!.DISABLED).toMatch(/^disabled \d{4}-/);
    expect(listed!.MEMBERS).toBe("1");
    expect(ok(await suite(db, ["tenant", "disable", "acme"]))).toContain("already disabled");

    expect(ok(await suite(db, ["tenant", "enable", "ACME"]))).toContain("enabled acme");
    // The same session works again, with the data it had.
    expect((await me()).status).toBe(200);
    const list = await server.call("GET", "/api/v1/crm/accounts", { token: access_token, tenant: "acme" });
    expect(list.status).toBe(200);
    expect(list.body.items.map((a: { name: string }) => a.name)).toContain("Kept Ltd");
    expect((await login("acme")).status).toBe(200);
    expect(ok(await suite(db, ["tenant", "enable", "acme"]))).toContain("already enabled");

    // Both changes are in the organization's audit log, by the command line.
    const log = await server.call("GET", "/api/v1/audit-log?action=tenant.disabled&action=tenant.enabled", { token: access_token, tenant: "acme" });
    expect(log.status).toBe(200);
    const rows = log.body.items as Array<{ action: string; user_id: string | null; user_agent: string; detail: Record<string, unknown> }>;
    expect(rows.map((r) => r.action)).toEqual(["tenant.enabled", "tenant.disabled"]);
    for (const r of rows) {
      expect(r.user_id).toBeNull();
      expect(r.user_agent).toBe("suite-cli");
      expect(r.detail).toMatchObject({ actor: "cli", subdomain: "acme" });
    }
    expect(rows[1]!.detail.command).toBe("suite tenant disable");

    // The reset link was not spent by the refused attempt: it works now (and ends the sessions, as a reset does).
    expect((await server.call("POST", "/api/v1/auth/password/reset", { body: { token: resetToken, password: NEW_PASSWORD } })).status).toBe(200);
  }, SLOW);
});

describe("errors name what is missing", () => {
  test.each([
    [["tenant", "disable"], "tenant disable: missing SUBDOMAIN"],
    [["tenant", "enable", "nope"], "no organization has the subdomain nope"],
    [["tenant", "disable", "acme", "beta"], "unexpected argument beta"],
    [["tenant", "list", "acme"], "unexpected argument acme"],
    [["tenant", "disable", "acme", "--name", "x"], "tenant disable: unknown option --name"],
  ])("%p: exit 64, %p", async (args, message) => {
    expect(fails(await suite(db, args), 64)).toContain(message);
  }, SLOW);
});
