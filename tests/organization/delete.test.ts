import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ON_POSTGRES } from "../support/backend";
import { type World, buildWorld } from "../security/isolation/world";
import { testSql } from "../support/sql";
import { createDeletionExports } from "../../src/organization/deletion-exports";
import type { DeletionResult } from "../../src/organization/delete";
import { mentions, rowsWithout } from "./delete-walk";

/**
 * Deleting an organization (src/organization/delete.ts), on the backend under test: A ("alpha")
 * holds data in every feature (tests/security/isolation/world.ts: CRM, invitations and mail,
 * sessions, 2FA, passkeys, identity providers, an import job, audit rows) and 300 more deals; B
 * ("bravo") holds the same kinds of rows. The deletion is stopped after its first batches (a
 * process killed half-way), then resumed as a restart resumes it. Every table of the schema is
 * walked from the catalog: none may keep a row that mentions A's id, and every row that does not
 * mention it (B's, the server's) must be exactly as it was.
 */

const SLOW = 120_000;
let w: World;
let before: Record<string, number>;
let untouched: Record<string, string[]>;
let result: DeletionResult;
const holds: number[] = [];
/** What still mentions A when the last transaction (tenants row and marker) begins. */
let beforeFinish: Record<string, number> | null = null;

/**
 * SQLite's full-text index (deals_fts, a view of the deals by rowid, and its shadow tables of
 * index pages) names no organization in its rows: it is checked by its integrity check and by
 * searching for A's word instead (below).
 */
const INDEX_PAGES = /^deals_fts/;

beforeAll(async () => {
  w = await buildWorld();
  const admin = { token: w.a.admin.access, tenant: "alpha" };
  for (let i = 0; i < 300; i++) {
    const r = await w.t.json("POST", "/api/v1/crm/deals", { ...admin, body: { title: `Bulk quokka deal ${i}`, account_id: w.a.accountId, value: i } });
    if (r.status !== 201) throw new Error(`deal ${i}: ${r.status}`);
  }
  before = await mentions(w.t, w.a.tenantId);
  untouched = await rowsWithout(w.t, w.a.tenantId);
  // Every batch's transaction, timed.
  const store = w.t.ctx.repos.tenantDeletion;
  const deleteSome = store.deleteSome.bind(store);
  store.deleteSome = async (...a) => {
    const started = performance.now();
    try {
      return await deleteSome(...a);
    } finally {
      holds.push(performance.now() - started);
    }
  };
  // The tenants row's foreign keys would cascade whatever the batches left, in one transaction of
  // any size: the batches must leave nothing but it (and the marker) to the last step.
  const finish = store.finish.bind(store);
  store.finish = async (tenantId) => {
    beforeFinish = await mentions(w.t, tenantId);
    return finish(tenantId);
  };
}, SLOW);

afterAll(async () => {
  if (w) rmSync(w.t.ctx.organizationDeletion.exports.root, { recursive: true, force: true });
  await w?.t.close();
});

describe("deleting an organization", () => {
  test("the walk finds A's rows in the tables that hold them before the deletion (the check below is not empty)", () => {
    for (const table of ["tenants", "users", "sessions", "deals", "accounts", "contacts", "deal_counts", "mail_outbox", "invitations", "audit_log", "crm_jobs", "passkeys", "user_totp", "identity_providers", "profiles", "pipeline_stages"]) {
      expect({ table, rows: before[table] ?? 0 }).toMatchObject({ table, rows: expect.any(Number) });
      expect(before[table] ?? 0).toBeGreaterThan(0);
    }
    expect(before.deals).toBe(303);
    // The deal search's pending counter rows, on both (PostgreSQL: schema 73).
    expect(before.deal_search_pending ?? 0).toBeGreaterThan(0);
  });

  test("begun and stopped after two batches (a process killed half-way): A answers 403 tenant_disabled at once, its rows are half gone, B works", async () => {
    const del = w.t.ctx.organizationDeletion;
    // Deals and what refers to them (their timeline), the first rows a deletion takes.
    const dealRows = async () =>
      (await testSql(w.t.ctx).get<{ n: number }>("SELECT (SELECT count(*) FROM deals WHERE tenant_id = ?1) + (SELECT count(*) FROM deal_activities WHERE tenant_id = ?1) AS n", w.a.tenantId))!.n;
    const before = await dealRows();
    const id = await del.begin("alpha", { actor: "cli", command: "tenant delete" });
    expect(id).toBe(w.a.tenantId);
    const partial = await del.run(id, { maxBatches: 2 });
    expect(partial.finished).toBe(false);
    expect(partial.batches).toBe(2);
    expect(partial.export).not.toBeNull();

    const me = await w.t.json("GET", "/api/v1/auth/me", { token: w.a.admin.access, tenant: "alpha" });
    expect(me.status).toBe(403);
    expect(me.body.code).toBe("tenant_disabled");
    const login = await w.t.json("POST", "/api/v1/auth/login", { tenant: "alpha", body: { email: w.a.admin.email, password: w.a.admin.password } });
    expect(login.status).toBe(403);

    const left = await dealRows();
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThan(before);
    expect((await del.pending()).map((p) => p.subdomain)).toEqual(["alpha"]);

    const bravo = await w.t.json("GET", "/api/v1/crm/deals?search=wombat", { token: w.b.admin.access, tenant: "bravo" });
    expect(bravo.status).toBe(200);
    expect(bravo.body.total).toBe(3);
  }, SLOW);

  test("a restart resumes it: no table keeps a row that mentions A; every other row is exactly as it was", async () => {
    const resumed = await w.t.ctx.organizationDeletion.resumeAll();
    expect(resumed).toHaveLength(1);
    result = resumed[0]!;
    expect(result.finished).toBe(true);
    expect(await w.t.ctx.organizationDeletion.pending()).toEqual([]);

    // The server's own audit table keeps the deletion's two entries (started, deleted): it is the
    // record that outlives the organization, and no organization's data.
    const { operator_audit: serverAudit, ...kept } = await mentions(w.t, w.a.tenantId);
    expect(kept).toEqual({});
    expect(serverAudit).toBe(2);
    // Rate-limit windows keyed by A's ids (imports per admin) go in that last step, by their key.
    const { rate_limits: _windows, operator_audit: _started, ...left } = beforeFinish!;
    expect(left).toEqual({ tenants: 1, settings: 1 });
    const after = await rowsWithout(w.t, w.a.tenantId);
    expect(Object.keys(after).sort()).toEqual(Object.keys(untouched).sort());
    for (const table of Object.keys(untouched)) {
      if (INDEX_PAGES.test(table)) continue;
      expect({ table, rows: after[table] }).toEqual({ table, rows: untouched[table] });
    }
    // The subdomain is free and names nothing.
    expect((await w.t.json("GET", "/api/v1/auth/me", { token: w.a.admin.access, tenant: "alpha" })).status).not.toBe(200);
    expect(await w.t.ctx.repos.tenants.bySubdomain("alpha")).toBeNull();
  }, SLOW);

  test("the search index and counters still answer B exactly; on SQLite the full-text index passes its integrity check", async () => {
    const b = { token: w.b.admin.access, tenant: "bravo" };
    expect((await w.t.json("GET", "/api/v1/crm/deals?search=wombat", b)).body.total).toBe(3);
    expect((await w.t.json("GET", "/api/v1/crm/deals", b)).body.total).toBe(3);
    expect((await w.t.json("GET", "/api/v1/crm/deals?search=quokka", b)).body.total).toBe(0);
    if (!ON_POSTGRES) {
      const db = w.t.ctx.db;
      db.run("INSERT INTO deals_fts(deals_fts) VALUES('integrity-check')");
      const hits = db.query("SELECT count(*) AS n FROM deals_fts WHERE deals_fts MATCH 'quokka'").get() as { n: number };
      expect(hits.n).toBe(0);
    }
  });

  test("every batch was its own short transaction (SQLite: under the 50 ms any writer may hold)", () => {
    expect(holds.length).toBeGreaterThan(10);
    if (!ON_POSTGRES) expect(Math.max(...holds)).toBeLessThan(50);
  });

  test("the server audit entries are log lines: started, then deleted with the rows and the export's folder", () => {
    const audit = w.t.logs.filter((l) => l.msg === "server audit");
    expect(audit.map((l) => l.action)).toEqual(["tenant.deletion_started", "tenant.deleted"]);
    expect(audit[1]).toMatchObject({ actor: "cli", command: "tenant delete", tenant_id: w.a.tenantId, subdomain: "alpha", name: "Quokka Holdings", export: result.export!.dir });
    expect(audit[1]!.rows as number).toBeGreaterThan(303);
  });

  test("the final export holds A's deals, accounts and contacts (0600 files in a 0700 folder named by its token), and none of B's", () => {
    const files = result.export!.files;
    expect(statSync(result.export!.dir).mode & 0o777).toBe(0o700);
    for (const f of Object.values(files)) expect(statSync(f).mode & 0o777).toBe(0o600);
    const deals = readFileSync(files.deals, "utf8");
    expect(deals.split("\n").filter(Boolean)).toHaveLength(304);
    expect(deals).toContain("Quokka expansion");
    expect(deals).toContain("Bulk quokka deal 299");
    expect(readFileSync(files.accounts, "utf8")).toContain("Quokka Corp");
    expect(readFileSync(files.contacts, "utf8")).toContain("quokka@contact.test");
    for (const f of Object.values(files)) expect(readFileSync(f, "utf8").toLowerCase()).not.toContain("wombat");
    expect(result.export!.dir).toBe(join(w.t.ctx.organizationDeletion.exports.root, result.export!.token));
  });

  test("the export is kept 7 days on the server's clock, then swept", async () => {
    const exports = w.t.ctx.organizationDeletion.exports;
    w.clock.advance(6 * 86_400_000);
    await w.t.ctx.housekeep();
    expect(await exports.find(result.export!.token)).not.toBeNull();
    w.clock.advance(86_400_000);
    await w.t.ctx.housekeep();
    expect(await exports.find(result.export!.token)).toBeNull();
    expect(() => statSync(result.export!.dir)).toThrow();
  });
});

describe("the export's token", () => {
  test("claims the export once: a second claim of the same token finds nothing, and done() removes the files", async () => {
    const dir = mkdtempSync(join(tmpdir(), "suite-exports-"));
    try {
      const exports = createDeletionExports({ dataDir: dir, now: () => 1_000 });
      const { dir: folder, manifest } = await exports.create("tenant-1", "acme");
      for (const f of Object.values(manifest.files)) await Bun.write(join(folder, f), "id\n");
      expect(await exports.find(manifest.token)).toBeNull(); // no manifest yet: not finished
      await exports.seal(folder, manifest);
      expect((await exports.find(manifest.token))!.manifest.subdomain).toBe("acme");
      expect(await exports.find("../../etc")).toBeNull();
      const claim = await exports.claim(manifest.token);
      expect(claim).not.toBeNull();
      expect(readFileSync(claim!.paths.deals, "utf8")).toBe("id\n");
      expect(await exports.claim(manifest.token)).toBeNull();
      await claim!.done();
      expect(() => statSync(claim!.paths.deals)).toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
