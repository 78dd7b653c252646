import { openMail } from "../support/outbox";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AFTER_COPY, DERIVED_FROM, copyToPostgresCommand, skippedBecause } from "../../src/cli/copy-to-postgres";
import { loadConfig } from "../../src/config";
import { openDatabase } from "../../src/db/database";
import { createPostgresStores } from "../../src/stores/postgres";
import { openPostgres } from "../../src/stores/postgres/database";
import { emailHash, emailHashSql } from "../../src/stores/postgres/user-directory";
import { migratePostgres } from "../../src/stores/postgres/migrate";
import { searchHeadOf } from "../../src/stores/postgres/deals-search-page";
import { testApp } from "../helpers";
import { noteSecret } from "../security/ledger";
import { type EmptyDatabase, TEST_DATABASE_URL, emptyPostgresDatabase } from "../support/pg-database";
import { oneLineFailure, runSuite } from "./kit";

/** A password for the target's URL: the test cluster trusts local logins, so it is never checked, only carried. */
const PASSWORD = "copy-pg-Secret-7f3a9c";
noteSecret("database password", PASSWORD);
const withPassword = (url: string) => {
  const u = new URL(url);
  u.password = PASSWORD;
  return u.toString();
};

/** Rows as comparable text, whatever order each side answered in. */
const canonical = (rows: Array<Record<string, unknown>>) =>
  rows.map((r) => JSON.stringify(Object.keys(r).sort().map((k) => [k, typeof r[k] === "bigint" ? Number(r[k]) : r[k]]))).sort();

describe.skipIf(!TEST_DATABASE_URL)("suite copy-to-postgres (PostgreSQL only: runs in npm test's PostgreSQL run)", () => {
  let dir: string;
  let file: string;
  let target: EmptyDatabase;
  const counts: Record<string, number> = {};

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "suite-copy-pg-"));
    file = join(dir, "suite.db");
    // A database used as people use it: two organizations, invitations (one accepted), accounts, deals.
    const t = testApp({ db: file, backend: "sqlite" });
    for (const sub of ["copya", "copyb"]) {
      const org = await t.signup(sub);
      const token = org.access_token;
      for (const email of [`m1@${sub}.test`, `m2@${sub}.test`]) {
        const r = await t.json("POST", "/api/v1/users/invite", { token, tenant: sub, body: { email } });
        expect(r.status).toBe(201);
      }
      const row = t.ctx.db.query("SELECT id, link FROM mail_outbox WHERE recipient = ? ORDER BY created_at DESC LIMIT 1").get(`m1@${sub}.test`) as { id: string; link: string } | null;
      const mail = row && openMail(t.ctx.keys.encryptionKey, row);
      const invite = mail?.link.split("token=")[1];
      expect(invite).toBeTruthy();
      const accepted = await t.json("POST", "/api/v1/auth/invitations/accept", { tenant: sub, body: { token: decodeURIComponent(invite!), password: "member password 1", full_name: "Member One" } });
      expect(accepted.status).toBe(201);
      for (let a = 0; a < 3; a++) {
        const acc = await t.json("POST", "/api/v1/crm/accounts", { token, tenant: sub, body: { name: `Account ${a}` } });
        expect(acc.status).toBe(201);
        for (let d = 0; d < 7; d++) {
          const deal = await t.json("POST", "/api/v1/crm/deals", { token, tenant: sub, body: { title: `Deal ${a}-${d}`, account_id: acc.body.id, value: 100 * d + 0.5 } });
          expect(deal.status).toBe(201);
        }
      }
    }
    // An organization without deals (no numbering row on SQLite), whose admin shares an address with copya's member.
    expect((await t.json("POST", "/api/v1/auth/signup", { body: { email: "m1@copya.test", password: "a good password 1", tenant_name: "Copy C", subdomain: "copyc" } })).status).toBe(201);
    // A sign-in attempt for an address no organization has: an audit row of no organization.
    expect((await t.json("POST", "/api/v1/auth/login", { body: { email: "nobody@copy.test", password: "not a password 1" } })).status).toBe(401);
    t.close();
    const db = openDatabase(file);
    for (const { name } of db.query("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as Array<{ name: string }>) {
      if (!skippedBecause(name)) counts[name] = (db.query(`SELECT count(*) AS n FROM "${name}"`).get() as { n: number }).n;
    }
    db.close();
    target = await emptyPostgresDatabase("copy");
  });

  afterAll(async () => {
    await target?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("copies every table into an empty database: counts equal, every row the same, what to change printed, the password never shown", async () => {
    expect(counts.deals).toBe(42);
    expect(counts.users).toBe(5);
    expect(counts.crm_tenants).toBe(2);
    expect(counts.invitations).toBe(4);
    const r = await runSuite(["copy-to-postgres", "--database-url", withPassword(target.url)], { cwd: dir, env: { SUITE_DB: file } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("every table's count equals SQLite's");
    expect(r.stdout).toContain("deals: 42 rows");
    expect(r.stdout).toContain(`Set SUITE_DATABASE_URL=postgres://suite:***@`);
    expect(r.stdout).toContain(`${file}.keys`);
    expect(r.stdout).toContain("not copied: ");
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);

    const pg = openPostgres(target.url, { max: 1 });
    const db = openDatabase(file);
    try {
      for (const [table, n] of Object.entries(counts)) {
        const pgRows = await pg.unsafe(`SELECT * FROM "${table}"`);
        expect({ table, n: pgRows.length }).toEqual({ table, n });
        // Stored columns only: SQLite's generated ones (deals.stage_token, …) are derived, not data.
        const columns = (db.query(`PRAGMA table_info("${table}")`).all() as Array<{ name: string }>).map((c) => `"${c.name}"`).join(", ");
        const sqliteRows = db.query(`SELECT ${columns} FROM "${table}"`).all() as Array<Record<string, unknown>>;
        // The audit rows of no organization: NULL on SQLite, '' on PostgreSQL (schema 53).
        if (table === "audit_log") for (const r of sqliteRows) r.tenant_id ??= "";
        // PostgreSQL's deals.search_head (schema 71) is derived by its trigger, not copied: right, then left out.
        if (table === "deals")
          for (const r of pgRows) {
            expect(r.search_head).toBe(searchHeadOf(r.search_text as string));
            delete r.search_head;
          }
        expect(canonical(pgRows)).toEqual(canonical(sqliteRows));
      }
      expect(await pg.all`SELECT action FROM audit_log WHERE tenant_id = ''`).toEqual([{ action: "login.failure" }]);
      // The audit log's identity continues after the copied ids: a new row does not collide.
      const maxId = (db.query("SELECT max(id) AS m FROM audit_log").get() as { m: number }).m;
      expect(maxId).toBeGreaterThan(0);
      const next = await pg.one<{ id: number }>`INSERT INTO audit_log (tenant_id, action, created_at) VALUES ('', 'after_copy', 1) RETURNING id`;
      expect(next!.id).toBe(maxId + 1);
      await pg.run`DELETE FROM audit_log WHERE id = ${next!.id}`;
      // Derived by the AFTER_COPY steps (schema 54): the address directory, equal to the copied
      // users, and tenant numbers that go on after the copied ones.
      const want = await pg.unsafe(`SELECT ${emailHashSql("email")} AS email_hash, tenant_id, id AS user_id FROM users ORDER BY 1, 2, 3`);
      expect(await pg.unsafe("SELECT email_hash, tenant_id, user_id FROM user_directory ORDER BY 1, 2, 3")).toEqual(want);
      expect(want.length).toBe(5);
      const stores = createPostgresStores(pg);
      // The address has two accounts; the invited one (proven) wins over copyc's unproven admin.
      expect(await pg.all`SELECT count(*)::int AS n FROM user_directory WHERE email_hash = ${emailHash("m1@copya.test")}`).toEqual([{ n: 2 }]);
      expect((await stores.users.byEmailAnyTenant("m1@copya.test", 3)).map((u) => u.full_name)).toEqual(["Member One"]);
      const copiedMax = (db.query("SELECT max(tenant_no) AS m FROM crm_tenants").get() as { m: number }).m;
      expect((await pg.one<{ n: number }>`SELECT nextval('crm_tenant_no') AS n`)!.n).toBe(copiedMax + 1);
    } finally {
      db.close();
      await pg.close();
    }
  });

  test("a target that is not empty is refused, and left exactly as it was", async () => {
    const pg = openPostgres(target.url, { max: 1 });
    const before = await pg.one<{ n: number }>`SELECT count(*)::bigint AS n FROM deals`;
    const r = await runSuite(["copy-to-postgres", "--database-url", withPassword(target.url)], { cwd: dir, env: { SUITE_DB: file } });
    const line = oneLineFailure(r, 64);
    expect(line).toContain("is not empty (rows in ");
    expect(line).toContain("copy into a new, empty database");
    expect(line).not.toContain(PASSWORD);
    expect(await pg.one`SELECT count(*)::bigint AS n FROM deals`).toEqual(before);
    await pg.close();
  });

  test("derived PostgreSQL data: the copy fails (and leaves nothing) until an AFTER_COPY step rebuilds it, then holds what the step made", async () => {
    const other = await emptyPostgresDatabase("copyderived");
    const pg = openPostgres(other.url, { max: 1 });
    try {
      await migratePostgres(pg);
      // A derived table of a store's own (as the deal list's counters are): never copied.
      await pg.unsafe("CREATE TABLE deal_derived (tenant_id text NOT NULL, n bigint NOT NULL, PRIMARY KEY (tenant_id))");
      DERIVED_FROM.deal_derived = "deals";
      const config = loadConfig({}, { SUITE_DB: file, SUITE_DATABASE_URL: other.url });
      const lines: string[] = [];
      try {
        await expect(copyToPostgresCommand(config, (l) => lines.push(l))).rejects.toThrow(/deal_derived is empty after the copy though deals has rows: no AFTER_COPY step rebuilt it/);
        expect(await pg.one`SELECT count(*)::bigint AS n FROM deals`).toEqual({ n: 0 });
        AFTER_COPY.push({ name: "deal derived", run: async (tx) => void (await tx.run`INSERT INTO deal_derived SELECT tenant_id, count(*) FROM deals GROUP BY tenant_id`) });
        try {
          await copyToPostgresCommand(config, (l) => lines.push(l));
        } finally {
          AFTER_COPY.pop();
        }
      } finally {
        delete DERIVED_FROM.deal_derived;
      }
      expect(lines).toContain("  rebuilt: deal derived");
      expect(await pg.all`SELECT n FROM deal_derived ORDER BY n`).toEqual([{ n: 21 }, { n: 21 }]);
      expect(await pg.one`SELECT count(*)::bigint AS n FROM deals`).toEqual({ n: 42 });
      // The deal list's own counters were rebuilt by their step: every deal counted once per tenant.
      expect(await pg.all`SELECT sum(n)::bigint AS n FROM deal_counts WHERE assignee = '*' GROUP BY tenant_id ORDER BY 1`).toEqual([{ n: 21 }, { n: 21 }]);
    } finally {
      await pg.close();
      await other.drop();
    }
  });

  test("without --database-url it says what it needs", async () => {
    const r = await runSuite(["copy-to-postgres"], { cwd: dir, env: { SUITE_DB: file } });
    expect(oneLineFailure(r, 64)).toContain("needs --database-url");
  });

  test("a URL that is not PostgreSQL's is refused by the setting, the password masked", async () => {
    const r = await runSuite(["copy-to-postgres", "--database-url", `mysql://suite:${PASSWORD}@127.0.0.1/suite`], { cwd: dir, env: { SUITE_DB: file } });
    const line = oneLineFailure(r, 78);
    expect(line).toContain("must start with postgres:// or postgresql://");
    expect(line).not.toContain(PASSWORD);
  });
});
