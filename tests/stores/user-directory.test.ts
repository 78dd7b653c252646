/**
 * Issues 27 and 28: a request's cost does not follow the number of organizations, and no
 * organization's transaction makes another wait.
 * - The lookups that name no organization (sign-in, magic link, reset) find an address's accounts
 *   on both backends; on PostgreSQL through the address directory (schema 54), which must equal
 *   what users holds after every kind of write (a directory that drifted would hide accounts).
 * - A version-3 database gets the directory and every organization's numbering row on migration.
 * - A long transaction holding organization A's first deal does not hold up organization B's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { newId } from "../../src/kernel/ids";
import { createPostgresStores } from "../../src/stores/postgres";
import { openPostgres, type Pg } from "../../src/stores/postgres/database";
import { migratePostgres, pgTargetVersion } from "../../src/stores/postgres/migrate";
import { LATER_FILES, schemaFiles } from "../../src/stores/postgres/schema";
import { removeSeededTenant } from "../../src/stores/postgres/seed";
import { emailHashSql } from "../../src/stores/postgres/user-directory";
import { BACKENDS, POSTGRES_URL, freshPostgres } from "./backends";
import { dealFields } from "./crm-support";
import { T0, addMember, type OrgBackend, orgBackend, signup } from "./org-fixture";
import { emptyPostgresDatabase, type EmptyDatabase } from "../support/pg-database";

/** The directory as users says it must be, and as it is (PostgreSQL). */
async function expectDirectoryMatchesUsers(pg: Pg): Promise<void> {
  const want = await pg.unsafe(`SELECT ${emailHashSql("email")} AS email_hash, tenant_id, id AS user_id FROM users ORDER BY 1, 2, 3`);
  const have = await pg.unsafe("SELECT email_hash, tenant_id, user_id FROM user_directory ORDER BY 1, 2, 3");
  expect(have).toEqual(want);
}

for (const backend of BACKENDS) {
  describe(`tenant-less lookups and the address directory (${backend.name})`, () => {
    let b: OrgBackend;
    let pg: Pg | null = null;
    beforeAll(async () => {
      const fresh = await backend.fresh();
      pg = fresh.kind === "postgres" ? fresh.pg : null;
      b = orgBackend(fresh);
    });
    afterAll(() => b.close());
    const matches = async () => {
      if (pg) await expectDirectoryMatchesUsers(pg);
    };

    test("signup, invitation, removal and an organization's deletion keep the directory equal to users; the lookups follow", async () => {
      const one = await signup(b.org, "one", T0);
      const two = await signup(b.org, "two", T0 + 10);
      const three = await signup(b.org, "three", T0 + 20);
      await matches();
      // The same address in three organizations, joined oldest in "one".
      const inOne = await addMember(b.org, one, "shared@x.test", false, T0 + 100);
      const inTwo = await addMember(b.org, two, "shared@x.test", false, T0 + 200);
      const inThree = await addMember(b.org, three, "shared@x.test", false, T0 + 300);
      await matches();
      const anyTenant = async () => (await b.org.users.byEmailAnyTenant("shared@x.test", 3)).map((u) => u.tenant_id);
      expect(await anyTenant()).toEqual([one.tenantId, two.tenantId, three.tenantId]);
      expect((await b.org.users.byEmailAnyTenant("admin@two.test", 3)).map((u) => u.id)).toEqual([two.adminId]);
      expect(await b.org.users.byEmailAnyTenant("nobody@x.test", 3)).toEqual([]);

      // Removed from "one": no longer found there, in the directory or by the lookup.
      const removed = await b.org.members.remove(one.tenantId, inOne.id, null, T0 + 400, () => ({ action: "user.removed", userId: one.adminId, ip: null, userAgent: null }));
      expect(typeof removed).toBe("object");
      await matches();
      expect(await anyTenant()).toEqual([two.tenantId, three.tenantId]);

      // Joined again: a new account, at the end (newest).
      const back = await addMember(b.org, one, "shared@x.test", false, T0 + 500);
      await matches();
      expect(await anyTenant()).toEqual([two.tenantId, three.tenantId, one.tenantId]);
      expect(back.id).not.toBe(inOne.id);
      expect([inTwo.tenant_id, inThree.tenant_id]).toEqual([two.tenantId, three.tenantId]);
    });

    test.skipIf(backend.name !== "postgres")("an organization deleted with its members leaves nothing behind in the directory", async () => {
      const gone = await signup(b.org, "gone", T0 + 1000);
      await addMember(b.org, gone, "shared@x.test", false, T0 + 1100);
      await addMember(b.org, gone, "solo@gone.test", false, T0 + 1200);
      await matches();
      await removeSeededTenant(pg!, gone.tenantId);
      await matches();
      expect(await b.value("SELECT count(*)::int FROM user_directory WHERE tenant_id = $1", gone.tenantId)).toBe(0);
      expect(await b.org.users.byEmailAnyTenant("solo@gone.test", 3)).toEqual([]);
    });

    test.skipIf(backend.name !== "postgres")("a directory row without its account (stale) finds nothing; an account without its row is not found (why every write files it)", async () => {
      const t = await signup(b.org, "stale", T0 + 2000);
      // Stale: the row of an account that is not there.
      await pg!.unsafe(`INSERT INTO user_directory (email_hash, tenant_id, user_id) VALUES (${emailHashSql("$1")}, $2, 'no-such-user')`, ["ghost@x.test", t.tenantId]);
      expect(await b.org.users.byEmailAnyTenant("ghost@x.test", 3)).toEqual([]);
      await pg!.unsafe("DELETE FROM user_directory WHERE user_id = 'no-such-user'");
      // Missing: the lookup reads only the directory, never a scan of every organization.
      await pg!.unsafe(`DELETE FROM user_directory WHERE tenant_id = $1 AND user_id = $2`, [t.tenantId, t.adminId]);
      expect(await b.org.users.byEmailAnyTenant("admin@stale.test", 3)).toEqual([]);
      await pg!.unsafe(`INSERT INTO user_directory (email_hash, tenant_id, user_id) VALUES (${emailHashSql("$1")}, $2, $3)`, ["admin@stale.test", t.tenantId, t.adminId]);
      expect((await b.org.users.byEmailAnyTenant("admin@stale.test", 3)).map((u) => u.id)).toEqual([t.adminId]);
      await matches();
    });
  });
}

describe("every PostgreSQL store statement that adds, removes or readdresses accounts writes the directory too", () => {
  test("each file of src/stores/postgres with such a statement calls a directory function", async () => {
    // Writes to users: insert, delete, an organization's deletion, a new address (none yet: addresses never change).
    const WRITES_USERS = /INSERT INTO users\b|insertJson\([^,]+, "users"\)|DELETE FROM users\b|DELETE FROM tenants\b|UPDATE users SET (?:(?!WHERE)[^`])*\bemail\s*=/;
    const dir = join(import.meta.dir, "../../src/stores/postgres");
    const writers = readdirSync(dir).filter((f) => f.endsWith(".ts") && WRITES_USERS.test(readFileSync(join(dir, f), "utf8")));
    expect(writers.sort()).toEqual(["members.ts", "seed.ts", "tenant-deletion.ts", "users.ts"]);
    for (const f of writers) expect(`${f}: ${/\bdirectory\w*InTx\(/.test(readFileSync(join(dir, f), "utf8"))}`).toBe(`${f}: true`);
  });
});

describe.skipIf(!POSTGRES_URL)("PostgreSQL schema 54: the migration from version 3", () => {
  const dbs: EmptyDatabase[] = [];
  afterAll(async () => {
    for (const d of dbs) await d.drop();
  });

  test("backfills the directory from users and gives every organization a numbering row from the sequence", async () => {
    const d = await emptyPostgresDatabase("dir");
    dbs.push(d);
    const pg = openPostgres(d.url, { max: 1 });
    try {
      const later = new Set(LATER_FILES.filter((f) => f.version > 3).map((f) => f.name));
      await pg.begin(async (tx) => {
        await tx.unsafe("CREATE TABLE schema_version (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)");
        for (const f of schemaFiles()) if (!later.has(f.name)) await tx.unsafe(f.sql);
        await tx.unsafe("INSERT INTO schema_version VALUES (1, 'schema', 0), (2, '52-deal-text-by-filters.sql', 0), (3, '53-tenant-first-keys.sql', 10)");
      });
      // Three organizations: one with deals (tenant number 7, as an old database may have it), two without.
      await pg.unsafe(`INSERT INTO tenants (id, name, subdomain, created_at) VALUES ('t1', 'One', 'one', 1), ('t2', 'Two', 'two', 2), ('t3', 'Three', 'three', 3);
        INSERT INTO users (tenant_id, id, email, role, password_hash, created_at, updated_at) VALUES
          ('t1', 'u1', 'a@x.test', 'admin', 'h', 1, 1), ('t2', 'u2', 'a@x.test', 'admin', 'h', 2, 2), ('t3', 'u3', 'b@x.test', 'admin', 'h', 3, 3);
        INSERT INTO crm_tenants (tenant_id, tenant_no, next_deal) VALUES ('t1', 7, 40);
        INSERT INTO magic_links (tenant_id, token_hash, user_id, expires_at, created_at) VALUES ('t1', 'bare-link', 'u1', 9000000000000, 5);
        INSERT INTO account_tokens (tenant_id, token_hash, purpose, user_id, email, expires_at, created_at) VALUES ('t2', 'bare-reset', 'password_reset', 'u2', 'a@x.test', 9500000000000, 5)`);
      expect(await migratePostgres(pg)).toEqual({ from: 3, to: pgTargetVersion() });
      await expectDirectoryMatchesUsers(pg);
      expect(await pg.all`SELECT count(*)::int AS n FROM user_directory`).toEqual([{ n: 3 }]);
      const stores = createPostgresStores(pg);
      expect((await stores.users.byEmailAnyTenant("a@x.test", 3)).map((u) => u.id)).toEqual(["u1", "u2"]);
      const numbers = await pg.all<{ tenant_id: string; tenant_no: number; next_deal: number }>`
        SELECT tenant_id, tenant_no, next_deal FROM crm_tenants ORDER BY tenant_id`;
      expect(numbers.map((r) => r.tenant_id)).toEqual(["t1", "t2", "t3"]);
      expect(numbers[0]).toEqual({ tenant_id: "t1", tenant_no: 7, next_deal: 40 });
      // The new ones come after the highest number there was, distinct.
      expect(numbers.slice(1).map((r) => r.tenant_no).sort()).toEqual([8, 9]);
      expect((await pg.all<{ n: number }>`SELECT nextval('crm_tenant_no') AS n`)[0]!.n).toBe(10);
      // Links mailed before links named their organization: looked for until the last one written
      // before version 3 expires, then refused without reading any organization.
      expect(await pg.all`SELECT until FROM unnamed_links_until`).toEqual([{ until: 9_500_000_000_000 }]);
      expect(await stores.magicLinks.live(null, "bare-link", 8_000_000_000_000)).toMatchObject({ tenant_id: "t1", user_id: "u1" });
      expect(await stores.accountTokens.live(null, "bare-reset", "password_reset", 9_400_000_000_000)).toMatchObject({ tenant_id: "t2" });
      await pg.unsafe("UPDATE unnamed_links_until SET until = 7000000000000");
      const afterwards = createPostgresStores(pg);
      expect(await afterwards.magicLinks.live(null, "bare-link", 8_000_000_000_000)).toBeNull();
      expect(await afterwards.magicLinks.live("t1", "bare-link", 8_000_000_000_000)).toMatchObject({ user_id: "u1" });
    } finally {
      await pg.close();
    }
  });
});

describe.skipIf(!POSTGRES_URL)("PostgreSQL: links naming no organization in a database made new", () => {
  test("no link ever lacked its organization: a bare secret is unknown, its row is not looked for", async () => {
    const { pg, close } = await freshPostgres();
    try {
      expect(await pg.all`SELECT until FROM unnamed_links_until`).toEqual([]);
      await pg.unsafe(`INSERT INTO tenants (id, name, subdomain, created_at) VALUES ('t1', 'One', 'one', 1);
        INSERT INTO users (tenant_id, id, email, role, password_hash, created_at, updated_at) VALUES ('t1', 'u1', 'a@x.test', 'admin', 'h', 1, 1);
        INSERT INTO magic_links (tenant_id, token_hash, user_id, expires_at, created_at) VALUES ('t1', 'bare-link', 'u1', 9000, 5);
        INSERT INTO invitations (tenant_id, id, email, token_hash, expires_at, created_at, updated_at) VALUES ('t1', 'i1', 'b@x.test', 'bare-invite', 9000, 5, 5)`);
      const s = createPostgresStores(pg);
      expect(await s.magicLinks.live(null, "bare-link", 1000)).toBeNull();
      expect(await s.invitations.byTokenHash(null, "bare-invite")).toBeNull();
      expect(await s.magicLinks.live("t1", "bare-link", 1000)).toMatchObject({ user_id: "u1" });
      expect(await s.invitations.byTokenHash("t1", "bare-invite")).toMatchObject({ id: "i1" });
    } finally {
      await close();
    }
  });
});

describe.skipIf(!POSTGRES_URL)("PostgreSQL: no lock one organization holds makes another wait", () => {
  let pg: Pg;
  let close: () => Promise<void>;
  const pools: Pg[] = [];
  beforeAll(async () => {
    ({ pg, close } = await freshPostgres());
  });
  afterAll(async () => {
    for (const p of pools) await p.close();
    await close();
  });

  /** A new organization (as signup makes it) with one account, on its own pool of connections. */
  async function organization(subdomain: string) {
    const own = openPostgres(pg.url, { max: 2 });
    pools.push(own);
    const stores = createPostgresStores(own);
    const org = orgBackend({ kind: "postgres", pg: own, close: async () => {} }).org;
    const t = await signup(org, subdomain, T0);
    const accountId = newId();
    await stores.crm.insertAccount({ id: accountId, tenant_id: t.tenantId, name: `${subdomain} Ltd`, domain: null, industry: null, created_at: T0, updated_at: T0 });
    return { ...t, stores, firstDeal: () => stores.crm.deals.insert(t.tenantId, newId(), dealFields({ account_id: accountId, title: `first of ${subdomain}` }), T0 + 1) };
  }

  test("organization A's first deal held uncommitted: B's first deal (numbering row made at signup, or none yet) completes at once", async () => {
    const a = await organization("held");
    const b1 = await organization("fresh-one");
    const b2 = await organization("fresh-two");
    // The worst case for A and for one B: no numbering row yet (an organization made by hand), so
    // their first deal creates it; b1 has the row signup made.
    await pg.unsafe("DELETE FROM crm_tenants WHERE tenant_id = ANY($1::text[])", [[a.tenantId, b2.tenantId]]);
    expect(await pg.all`SELECT count(*)::int AS n FROM crm_tenants WHERE tenant_id = ${b1.tenantId}`).toEqual([{ n: 1 }]);
    // A's transaction (the deal store's own, as a long import's would be) stays open after its
    // first deal row is written: an AFTER INSERT trigger, last of the deal triggers by name,
    // sleeps in it while holding whatever that first deal took.
    await pg.unsafe(`CREATE FUNCTION test_hold_first_deal() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.tenant_id = '${a.tenantId}' THEN PERFORM pg_sleep(6); END IF; RETURN NULL; END $$;
      CREATE TRIGGER zzz_test_hold AFTER INSERT ON deals FOR EACH ROW EXECUTE FUNCTION test_hold_first_deal()`);
    try {
      const held = a.firstDeal();
      // Until A's INSERT is in (its transaction holds the numbering and the counters).
      const started = Date.now();
      while ((await pg.all`SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep'`).length === 0) {
        if (Date.now() - started > 5000) throw new Error("A's first deal never reached its INSERT");
        await Bun.sleep(20);
      }
      for (const b of [b1, b2]) {
        const t0 = performance.now();
        expect(await b.firstDeal()).toEqual({ ok: true });
        expect(performance.now() - t0).toBeLessThan(2000);
      }
      // A was still open all along, and commits afterwards.
      expect((await pg.all`SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep'`).length).toBe(1);
      expect(await held).toEqual({ ok: true });
    } finally {
      await pg.unsafe("DROP TRIGGER zzz_test_hold ON deals; DROP FUNCTION test_hold_first_deal()");
    }
    // Every organization has its own tenant number and its one deal.
    const rows = await pg.all<{ tenant_id: string; tenant_no: number; next_deal: number }>`
      SELECT tenant_id, tenant_no, next_deal FROM crm_tenants WHERE tenant_id = ANY(${[a.tenantId, b1.tenantId, b2.tenantId]}::text[])`;
    expect(rows.map((r) => r.next_deal)).toEqual([1, 1, 1]);
    expect(new Set(rows.map((r) => r.tenant_no)).size).toBe(3);
  }, 30_000);
});
