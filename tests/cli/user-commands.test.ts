import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { type TestApp, testApp } from "../helpers";
import { noteSecret } from "../security/ledger";
import { enable } from "../auth/two-factor/support";
import { accept, invited } from "../team/support";
import { fails, ok, suite, suiteAtTerminal, tableRows } from "./user-tenant-kit";

/**
 * `suite user …` against a database a running app (in this process) also serves: every change
 * the command line makes is checked over HTTP, and in the audit log the admins read.
 */

const dir = mkdtempSync(join(tmpdir(), "suite-user-cli-"));
const db = join(dir, "suite.db");
let t: TestApp;
let admin: Awaited<ReturnType<TestApp["signup"]>>;

const MEMBER_PASSWORD = "member password one";
const NEW_PASSWORD = "a brand new password";
const PIPED_PASSWORD = "piped in password";
for (const [k, v] of [["password", MEMBER_PASSWORD], ["password", NEW_PASSWORD], ["password", PIPED_PASSWORD]] as const) noteSecret(k, v);

const login = (email: string, password: string) => t.json("POST", "/api/v1/auth/login", { body: { email, password }, tenant: "acme" });
const me = (token: string) => t.json("GET", "/api/v1/auth/me", { token, tenant: "acme" });

/** A new member of acme, signed in: answers their access token. */
async function member(email: string): Promise<string> {
  const { token } = await invited(t, admin, email);
  const r = await accept(t, { token, password: MEMBER_PASSWORD, full_name: `Name of ${email.split("@")[0]}` }, { host: "acme.localhost" });
  expect(r.status).toBe(201);
  return r.body.access_token as string;
}

/** The audit rows the admins read in the security log, newest first. */
async function auditLog(action: string) {
  const r = await t.json("GET", `/api/v1/audit-log?action=${action}`, { token: admin.access_token, tenant: "acme" });
  expect(r.status).toBe(200);
  return r.body.items as Array<{ user_id: string | null; action: string; user_agent: string | null; detail: Record<string, unknown> }>;
}

function expectOperatorRow(row: { user_id: string | null; user_agent: string | null; detail: Record<string, unknown> } | undefined, command: string) {
  expect(row).toBeDefined();
  expect(row!.user_id).toBeNull();
  expect(row!.user_agent).toBe("suite-cli");
  expect(row!.detail).toMatchObject({ actor: "cli", command });
}

/** Subprocesses and password hashes on a shared 2-core machine: generous, never a timing assertion. */
const SLOW = 120_000;

beforeAll(async () => {
  t = testApp({ db });
  admin = await t.signup("acme");
  await t.signup("beta");
}, SLOW);
afterAll(() => {
  t.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("suite user list", () => {
  test("shows each member's email, name, role, 2FA, lock and last sign-in in a table", async () => {
    const token = await member("list2fa@acme.test");
    await enable(t, token);
    await member("never@acme.test");
    expect((await login(admin.email, admin.password)).status).toBe(200);

    const rows = tableRows(ok(await suite(db, ["user", "list", "--tenant", "ACME"])));
    const byEmail = Object.fromEntries(rows.map((r) => [r.EMAIL, r]));
    expect(byEmail[admin.email]).toMatchObject({ ROLE: "admin", "2FA": "off", LOCKED: "" });
    expect(byEmail[admin.email]!["LAST SIGN-IN"]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    expect(byEmail["list2fa@acme.test"]).toMatchObject({ NAME: "Name of list2fa", ROLE: "member", "2FA": "on" });
    expect(byEmail["never@acme.test"]).toMatchObject({ "2FA": "off", "LAST SIGN-IN": "never" });
    // Only acme's members.
    expect(rows.some((r) => r.EMAIL!.endsWith("beta.test"))).toBe(false);
  }, SLOW);
});

describe("suite user reset-password", () => {
  test("from SUITE_NEW_PASSWORD: the new password works, the old one and every session end, audited as the command line", async () => {
    const token = await member("pw-env@acme.test");
    const out = ok(await suite(db, ["user", "reset-password", "--tenant", "acme", "--email", "PW-Env@acme.test"], { env: { SUITE_NEW_PASSWORD: NEW_PASSWORD } }));
    expect(out).toContain("pw-env@acme.test");
    expect(out).toContain("1 session(s) ended");
    expect(out).not.toContain(NEW_PASSWORD);

    expect((await me(token)).body.code).toBe("session_revoked");
    expect((await login("pw-env@acme.test", MEMBER_PASSWORD)).status).toBe(401);
    expect((await login("pw-env@acme.test", NEW_PASSWORD)).status).toBe(200);
    const row = (await auditLog("user.password_set")).find((r) => r.detail.email === "pw-env@acme.test");
    expectOperatorRow(row, "suite user reset-password");
    expect(JSON.stringify(row)).not.toContain(NEW_PASSWORD);
  }, SLOW);

  test("from stdin (one line), when no terminal and no variable", async () => {
    await member("pw-stdin@acme.test");
    ok(await suite(db, ["user", "reset-password", "--tenant", "acme", "--email", "pw-stdin@acme.test"], { stdin: `${PIPED_PASSWORD}\nignored second line\n` }));
    expect((await login("pw-stdin@acme.test", PIPED_PASSWORD)).status).toBe(200);
  }, SLOW);

  test("at a terminal: asked twice at a prompt that does not echo; two different answers change nothing", async () => {
    const TYPED = "typed at the prompt";
    noteSecret("password", TYPED);
    await member("pw-tty@acme.test");
    const args = ["user", "reset-password", "--tenant", "acme", "--email", "pw-tty@acme.test"];
    const differ = await suiteAtTerminal(db, args, [["New password:", TYPED], ["Repeat it:", `${TYPED}!`]]);
    expect(differ.screen).toContain("the two passwords differ");
    expect(differ.code).toBe(64);
    expect((await login("pw-tty@acme.test", MEMBER_PASSWORD)).status).toBe(200);

    const r = await suiteAtTerminal(db, args, [["New password:", TYPED], ["Repeat it:", TYPED]]);
    expect(r.screen).toContain("new password set for pw-tty@acme.test");
    expect(r.screen).not.toContain(TYPED);
    expect(r.code).toBe(0);
    expect((await login("pw-tty@acme.test", TYPED)).status).toBe(200);
  }, SLOW);

  test("never from an option; a password the API would refuse, or none at all, changes nothing", async () => {
    await member("pw-bad@acme.test");
    const args = ["user", "reset-password", "--tenant", "acme", "--email", "pw-bad@acme.test"];
    expect(fails(await suite(db, [...args, "--password", NEW_PASSWORD]), 64)).toContain("ps");
    expect(fails(await suite(db, args, { env: { SUITE_NEW_PASSWORD: "short" } }), 64)).toContain("at least 8 characters");
    expect(fails(await suite(db, args, { env: { SUITE_NEW_PASSWORD: "x".repeat(129) } }), 64)).toContain("at most 128");
    expect(fails(await suite(db, args, { env: { SUITE_NEW_PASSWORD: "Password123" } }), 64)).toContain("list of common or leaked passwords");
    expect(fails(await suite(db, args, { env: { SUITE_NEW_PASSWORD: "pw-bad but long" } }), 64)).toContain("your email address's name");
    expect(fails(await suite(db, args, { stdin: "" }), 64)).toContain("SUITE_NEW_PASSWORD");
    expect((await login("pw-bad@acme.test", MEMBER_PASSWORD)).status).toBe(200);
  }, SLOW);
});

describe("suite user reset-2fa", () => {
  test("turns the second factor off, removes the backup codes and ends the sessions", async () => {
    const token = await member("reset2fa@acme.test");
    await enable(t, token);
    const challenged = await login("reset2fa@acme.test", MEMBER_PASSWORD);
    expect(challenged.body.requires_2fa).toBe(true);
    const userId = (await me(token)).body.user.id as string;
    const count = (table: string) => t.ctx.db.query(`SELECT count(*) AS n FROM ${table} WHERE user_id = ?`).get(userId);
    expect(count("user_totp")).toEqual({ n: 1 });
    expect(count("backup_codes")).toEqual({ n: 10 });

    const out = ok(await suite(db, ["user", "reset-2fa", "--tenant", "acme", "--email", "reset2fa@acme.test"]));
    expect(out).toContain("second factor turned off");
    expect(count("user_totp")).toEqual({ n: 0 });
    expect(count("backup_codes")).toEqual({ n: 0 });
    // The password alone signs in now: no challenge.
    const signedIn = await login("reset2fa@acme.test", MEMBER_PASSWORD);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.requires_2fa).toBeUndefined();
    expect(signedIn.body.access_token).toBeString();
    expect((await me(token)).body.code).toBe("session_revoked");
    const row = (await auditLog("user.2fa_reset")).find((r) => r.detail.email === "reset2fa@acme.test");
    expectOperatorRow(row, "suite user reset-2fa");
    expect(row!.detail).toMatchObject({ was_enabled: true, sessions_ended: 1 });
  }, SLOW);
});

describe("suite user unlock", () => {
  test("lifts the sign-in lockout the way POST /users/{id}/unlock does", async () => {
    await member("locked@acme.test");
    let last = 0;
    for (let i = 0; i < 11; i++) last = (await login("locked@acme.test", "wrong password!")).status;
    expect(last).toBe(429);
    expect((await login("locked@acme.test", MEMBER_PASSWORD)).status).toBe(429);
    const before = tableRows(ok(await suite(db, ["user", "list", "--tenant", "acme"]))).find((r) => r.EMAIL === "locked@acme.test");
    expect(before!.LOCKED).toBe("locked");

    expect(ok(await suite(db, ["user", "unlock", "--tenant", "acme", "--email", "locked@acme.test"]))).toContain("lockout lifted");
    expect((await login("locked@acme.test", MEMBER_PASSWORD)).status).toBe(200);
    const after = tableRows(ok(await suite(db, ["user", "list", "--tenant", "acme"]))).find((r) => r.EMAIL === "locked@acme.test");
    expect(after!.LOCKED).toBe("");
    expectOperatorRow((await auditLog("user.unlocked")).find((r) => r.detail.email === "locked@acme.test"), "suite user unlock");
  }, SLOW);
});

describe("suite user remove", () => {
  const deal = async (token: string, assigned_to: string | null) => {
    const acc = await t.json("POST", "/api/v1/crm/accounts", { token: admin.access_token, tenant: "acme", body: { name: `Account ${Math.random()}` } });
    const d = await t.json("POST", "/api/v1/crm/deals", { token, tenant: "acme", body: { title: "A deal", account_id: acc.body.id, assigned_to } });
    expect(d.status).toBe(201);
    return d.body.id as string;
  };
  const assignee = async (dealId: string) => (await t.json("GET", `/api/v1/crm/deals/${dealId}`, { token: admin.access_token, tenant: "acme" })).body.assigned_to;

  test("--reassign-to moves the deals; the member's sessions end; audited", async () => {
    const token = await member("leaver@acme.test");
    const heir = await member("heir@acme.test");
    const leaverId = (await me(token)).body.user.id as string;
    const heirId = (await me(heir)).body.user.id as string;
    const dealId = await deal(admin.access_token, leaverId);

    const out = ok(await suite(db, ["user", "remove", "--tenant", "acme", "--email", "leaver@acme.test", "--reassign-to", "HEIR@acme.test"]));
    expect(out).toContain("1 deal(s) reassigned to heir@acme.test");
    expect(await assignee(dealId)).toBe(heirId);
    expect((await me(token)).status).toBe(401);
    expect((await login("leaver@acme.test", MEMBER_PASSWORD)).status).toBe(401);
    const row = (await auditLog("user.removed")).find((r) => r.detail.email === "leaver@acme.test");
    expectOperatorRow(row, "suite user remove");
    expect(row!.detail).toMatchObject({ deals_reassigned_to: heirId, deals_moved: 1 });
  }, SLOW);

  test("without --reassign-to the deals become unassigned", async () => {
    const token = await member("leaver2@acme.test");
    const dealId = await deal(admin.access_token, (await me(token)).body.user.id);
    expect(ok(await suite(db, ["user", "remove", "--tenant", "acme", "--email", "leaver2@acme.test"]))).toContain("left unassigned");
    expect(await assignee(dealId)).toBeNull();
  }, SLOW);

  test("refuses the last admin, an unknown heir and the member themself, changing nothing", async () => {
    expect(fails(await suite(db, ["user", "remove", "--tenant", "acme", "--email", admin.email]), 1)).toContain("last admin");
    await member("stays@acme.test");
    expect(fails(await suite(db, ["user", "remove", "--tenant", "acme", "--email", "stays@acme.test", "--reassign-to", "ghost@acme.test"]), 64)).toContain("ghost@acme.test");
    expect(fails(await suite(db, ["user", "remove", "--tenant", "acme", "--email", "stays@acme.test", "--reassign-to", "stays@acme.test"]), 64)).toContain("member being removed");
    // A member of another organization is not a member here.
    expect(fails(await suite(db, ["user", "remove", "--tenant", "acme", "--email", "stays@acme.test", "--reassign-to", "admin@beta.test"]), 64)).toContain("admin@beta.test");
    expect((await login("stays@acme.test", MEMBER_PASSWORD)).status).toBe(200);
    expect((await login(admin.email, admin.password)).status).toBe(200);
  }, SLOW);
});

describe("errors name what is missing", () => {
  test.each([
    [["user", "list"], "missing --tenant"],
    [["user", "unlock", "--tenant", "acme"], "missing --email"],
    [["user", "reset-2fa", "--email", "x@acme.test"], "missing --tenant"],
    [["user", "unlock", "--tenant", "nope", "--email", "x@acme.test"], "no organization has the subdomain nope"],
    [["user", "unlock", "--tenant", "acme", "--email", "nobody@acme.test"], "no user with the email nobody@acme.test in acme"],
    [["user", "reset-2fa", "--tenant", "acme", "--email", "admin@beta.test"], "no user with the email admin@beta.test in acme"],
    // Said before any password is asked for (stdin is empty here: it would otherwise say so).
    [["user", "reset-password", "--tenant", "acme", "--email", "nobody@acme.test"], "no user with the email nobody@acme.test in acme"],
    [["user", "frobnicate"], "unknown command user frobnicate; usage: suite user list --tenant S"],
    [["user", "unlock", "--tenant", "acme", "--email", "x@acme.test", "extra"], "unexpected argument extra"],
    [["user", "unlock", "--tenant", "acme", "--email", "x@acme.test", "--reassign-to", "y@acme.test"], "user unlock: unknown option --reassign-to"],
  ])("%p: exit 64, %p", async (args, message) => {
    expect(fails(await suite(db, args), 64)).toContain(message);
  }, SLOW);

  test("no database at the path: said so, and none is created", async () => {
    const missing = join(dir, "nothing-here.db");
    expect(fails(await suite(missing, ["user", "list", "--tenant", "acme"]), 64)).toContain(`no database at ${missing}`);
    expect(await Bun.file(missing).exists()).toBe(false);
  }, SLOW);
});
