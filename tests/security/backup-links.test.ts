import { undoMigrationsAfter } from "../support/rewind";
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { backupCommand } from "../../src/cli/admin";
import { createMailSender } from "../../src/mail/sender";
import { tokenOf } from "../mail/smtp-support";
import { type TestApp, testApp } from "../helpers";
import { testSql } from "../support/sql";
import { noteSecret } from "./ledger";

/**
 * A copy of the database is not a way in (issue 29): a backup taken while an Administrator
 * invitation, a magic link and a password reset wait in the outbox holds none of their tokens,
 * and nothing in it is accepted by the server; the `.v<N>.bak` copy a migration makes of an
 * earlier release's file neither. The mail itself still goes out with a working link.
 */

const root = mkdtempSync(join(tmpdir(), "suite-backup-links-"));
const apps: TestApp[] = [];
afterAll(async () => {
  for (const a of apps) await a.close();
  rmSync(root, { recursive: true, force: true });
});
let n = 0;
const freshDb = () => join(root, `d${++n}`, "suite.db");
const PASSWORD = "invited admin password";
noteSecret("password", PASSWORD);

/** An organization on a database file with an Administrator invitation, a magic link and a reset pending. */
async function pendingLinks(db: string) {
  const t = testApp({ db, env: { SUITE_PUBLIC_URL: "http://localhost:8000" } });
  apps.push(t);
  const org = await t.signup(`links${n}`);
  const admin = await testSql(t.ctx).get<{ id: string }>("SELECT id FROM profiles WHERE tenant_id = ?1 AND is_admin = 1", org.tenant.id);
  expect((await t.json("POST", "/api/v1/users/invite", { token: org.access_token, tenant: org.subdomain, body: { email: `boss@${org.subdomain}.test`, profile_id: admin!.id } })).status).toBe(201);
  expect((await t.json("POST", "/api/v1/auth/magic-link", { body: { email: org.email }, tenant: org.subdomain })).status).toBe(202);
  expect((await t.json("POST", "/api/v1/auth/password/forgot", { body: { email: org.email }, tenant: org.subdomain })).status).toBe(202);
  for (let i = 0; i < 400 && (await t.ctx.repos.mail.list()).length < 4; i++) await Bun.sleep(5);
  // The store holds the key: it reads the links as the sender and `suite mail list` do.
  const tokens = new Map((await t.ctx.repos.mail.list()).filter((r) => r.link).map((r) => [r.kind, tokenOf(r.link!)]));
  expect([...tokens.keys()].sort()).toEqual(["email_verification", "invitation", "magic_link", "password_reset"]);
  return { t, org, tokens };
}

/** Every form a token could take in the file's bytes: as it is, URL-encoded, and its secret part alone. */
const formsOf = (token: string) => [token, encodeURIComponent(token), token.split(".").at(-1)!];

/** Whatever in `file` looks like a token: every `token=…` in its bytes, and every text cell of its outbox. */
function candidatesIn(file: string): string[] {
  const text = readFileSync(file).toString("latin1");
  const found = new Set([...text.matchAll(/token=([A-Za-z0-9._~%-]+)/g)].map((m) => decodeURIComponent(m[1]!)));
  const d = new Database(file, { readonly: true });
  try {
    for (const row of d.query("SELECT text_body, html_body, link FROM mail_outbox").all() as Array<Record<string, string | null>>) {
      for (const v of Object.values(row)) if (v) found.add(v);
    }
  } finally {
    d.close();
  }
  return [...found];
}

/** Tries `candidate` as an invitation token and as a magic-link token against the live server. */
async function accepted(t: TestApp, subdomain: string, candidate: string): Promise<boolean> {
  const token = candidate.slice(0, 256);
  const invite = await t.json("POST", "/api/v1/auth/invitations/accept", { body: { token, password: PASSWORD } });
  const magic = await t.json("POST", "/api/v1/auth/magic-verify", { body: { token }, tenant: subdomain });
  return invite.status < 300 || magic.status < 300;
}

describe("a backup holds no usable link", () => {
  test("suite backup with mail pending: no token in its bytes, nothing in it accepted; the mail still goes out and works", async () => {
    const db = freshDb();
    const { t, org, tokens } = await pendingLinks(db);
    const file = join(root, `backup-${n}.db`);
    backupCommand(t.config, file, () => {});
    const bytes = readFileSync(file).toString("latin1");
    for (const [kind, token] of tokens) for (const form of formsOf(token)) expect({ kind, form, found: bytes.includes(form) }).toEqual({ kind, form, found: false });
    // The backup does hold the pending invitation's mail, sealed.
    const d = new Database(file, { readonly: true });
    expect((d.query("SELECT count(*) AS n FROM mail_outbox WHERE kind = 'invitation' AND status = 'pending' AND link LIKE 'v1.%'").get() as { n: number }).n).toBe(1);
    d.close();
    const candidates = candidatesIn(file);
    expect(candidates.length).toBeGreaterThan(0);
    for (const c of candidates) expect({ c: c.slice(0, 40), accepted: await accepted(t, org.subdomain, c) }).toEqual({ c: c.slice(0, 40), accepted: false });

    // The sender (which has the key file) mails the link, and it works.
    const sent: Array<{ to: string; text: string; html: string }> = [];
    const sender = createMailSender({ repo: t.ctx.repos.mail, transport: { sendMail: async (m) => void sent.push(m) }, from: "suite@test.local", now: Date.now, log: () => {} });
    expect(await sender.drain()).toBe(4);
    const invitation = sent.find((m) => m.to === `boss@${org.subdomain}.test`)!;
    const link = /http:\/\/\S+accept-invitation#token=\S+/.exec(invitation.text)![0];
    expect(tokenOf(link)).toBe(tokens.get("invitation")!);
    expect(invitation.html).toContain(link);
    const ok = await t.json("POST", "/api/v1/auth/invitations/accept", { body: { token: tokenOf(link), password: PASSWORD } });
    expect(ok.status).toBe(201);
    expect(ok.body.user.role).toBe("admin");
  }, 60_000);

  test("an earlier release's clear links are sealed before the migration's .v<N>.bak copy", async () => {
    const db = freshDb();
    const { t, org } = await pendingLinks(db);
    await t.close();
    apps.splice(apps.indexOf(t), 1);
    // The file as the release before the sealing (version 15) left it: no sealing trigger, the links and bodies clear.
    const link = `http://${org.subdomain}.localhost:8000/accept-invitation#token=${encodeURIComponent(`${org.tenant.id}.olderreleasesecret0123456789abcdef`)}`;
    const d = new Database(db);
    undoMigrationsAfter(d, 15);
    d.run("INSERT INTO mail_outbox (id, tenant_id, kind, recipient, subject, text_body, html_body, link, status, next_attempt_at, created_at) VALUES ('clear1', ?1, 'invitation', 'old@x.test', 'Join', ?2, ?3, ?4, 'pending', 0, 0)", [
      org.tenant.id, `Join us: ${link}`, `<a href="${link}">Join</a>`, link,
    ]);
    d.run("PRAGMA user_version = 15");
    d.close();
    const upgraded = testApp({ db });
    apps.push(upgraded);
    const bak = readFileSync(`${db}.v15.bak`).toString("latin1");
    expect(bak.includes("olderreleasesecret")).toBe(false);
    // The live file too, once its WAL is folded in (as restore does before keeping it aside): secure_delete zeroed the old cells.
    upgraded.ctx.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    expect(readFileSync(db).toString("latin1").includes("olderreleasesecret")).toBe(false);
    // Still deliverable: the store opens what the upgrade sealed.
    const row = await upgraded.ctx.repos.mail.byId("clear1");
    expect(row).toMatchObject({ link, text_body: `Join us: ${link}` });
  }, 60_000);
});
