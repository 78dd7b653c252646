import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bulkSeed } from "../../src/crm/bulk-load";
import { createDealsQuery } from "../../src/crm/deals-query";
import type { DealListQuery } from "../../src/crm/model";
import { testApp } from "../helpers";

const t = testApp();
const dir = mkdtempSync(join(tmpdir(), "suite-seed-"));
afterAll(() => {
  t.close();
  rmSync(dir, { recursive: true, force: true });
});

// ANALYZE adds sqlite_stat1, which is SQLite's own and not part of the schema.
const schema = () => t.ctx.db.query("SELECT type, name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all();
const one = <T>(sql: string, ...args: Array<string | number>) => t.ctx.db.query(sql).get(...args) as T;

describe("bulk seed", () => {
  test("realistic data, exact counts and search, the schema left as it was", async () => {
    const a = await t.signup("seeda");
    const b = await t.signup("seedb");
    const before = schema();
    const hash = await t.ctx.hasher.hash("demo password");
    // First load: more new deals than stored, so indexes are rebuilt in bulk.
    const [ra] = bulkSeed(t.ctx.db, [{ tenantId: a.tenant.id, subdomain: "seeda", deals: 3000, passwordHash: hash }], t.ctx.now());
    // Second load: fewer than stored, so rows go through the live indexes and triggers.
    const [rb] = bulkSeed(t.ctx.db, [{ tenantId: b.tenant.id, subdomain: "seedb", deals: 400, passwordHash: hash }], t.ctx.now());
    expect(schema()).toEqual(before);
    expect(ra).toMatchObject({ deals: 3000 });
    expect(ra!.accounts).toBeGreaterThanOrEqual(50);
    expect(ra!.contacts).toBeGreaterThan(ra!.accounts);
    expect(ra!.users).toBeGreaterThanOrEqual(12);
    expect(rb!.deals).toBe(400);
    expect(one<{ ok: number }>("SELECT count(*) AS ok FROM pragma_integrity_check WHERE integrity_check = 'ok'").ok).toBe(1);
    t.ctx.db.run("INSERT INTO deals_fts (deals_fts, rank) VALUES ('integrity-check', 1)");

    for (const [tenant, n] of [[a.tenant.id, 3000], [b.tenant.id, 400]] as const) {
      expect(one<{ n: number }>("SELECT count(*) AS n FROM deals WHERE tenant_id = ?", tenant).n).toBe(n);
      const counted = t.ctx.db.query("SELECT stage, assignee, n FROM deal_counts WHERE tenant_id = ? AND n > 0 AND assignee <> '*' ORDER BY 1, 2").all(tenant);
      const truth = t.ctx.db
        .query("SELECT stage, coalesce(assigned_to, '') AS assignee, count(*) AS n FROM deals WHERE tenant_id = ? GROUP BY 1, 2 ORDER BY 1, 2")
        .all(tenant);
      expect(counted).toEqual(truth);
      const rollup = t.ctx.db.query("SELECT stage, n FROM deal_counts WHERE tenant_id = ? AND n > 0 AND assignee = '*' ORDER BY 1").all(tenant);
      expect(rollup).toEqual(t.ctx.db.query("SELECT stage, count(*) AS n FROM deals WHERE tenant_id = ? GROUP BY 1 ORDER BY 1").all(tenant));
    }
    // Shape: a third unassigned, stages skewed, notes on some, values over orders of magnitude.
    const unassigned = one<{ n: number }>("SELECT count(*) AS n FROM deals WHERE tenant_id = ? AND assigned_to IS NULL", a.tenant.id).n;
    expect(unassigned / 3000).toBeGreaterThan(0.28);
    expect(unassigned / 3000).toBeLessThan(0.39);
    const newest = one<{ n: number }>("SELECT count(*) AS n FROM deals WHERE tenant_id = ? AND stage = 'new'", a.tenant.id).n;
    const lost = one<{ n: number }>("SELECT count(*) AS n FROM deals WHERE tenant_id = ? AND stage = 'lost'", a.tenant.id).n;
    expect(newest).toBeGreaterThan(lost * 2);
    const notes = one<{ n: number }>("SELECT count(*) AS n FROM deals WHERE tenant_id = ? AND notes IS NOT NULL", a.tenant.id).n;
    expect(notes).toBeGreaterThan(300);
    expect(notes).toBeLessThan(1500);
    const v = one<{ lo: number; hi: number }>("SELECT min(value_cents) AS lo, max(value_cents) AS hi FROM deals WHERE tenant_id = ?", a.tenant.id);
    expect(v.hi / v.lo).toBeGreaterThan(1000);
    // Every demo user shares the one hash.
    expect(one<{ n: number }>("SELECT count(DISTINCT password_hash) AS n FROM users WHERE tenant_id = ? AND role = 'member'", a.tenant.id).n).toBe(1);

    // Search over seeded data: both strategies equal a direct scan.
    const word = one<{ name: string }>("SELECT name FROM accounts WHERE tenant_id = ? LIMIT 1", a.tenant.id).name.split(" ")[0]!.toLowerCase();
    const base: DealListQuery = { page: 1, size: 20, search: null, stages: null, assignee: null, sortBy: "value", sortDir: "desc" };
    for (const term of [word, "ion", "renewal", "zz", "e"]) {
      const truth = one<{ n: number }>("SELECT count(*) AS n FROM deals WHERE tenant_id = ? AND instr(search_text, ?) > 0", a.tenant.id, term).n;
      for (const rare of [1, 5000]) {
        const r = await createDealsQuery(t.ctx.db, { rare }).list(a.tenant.id, { ...base, search: term });
        expect(r.total).toBe(truth);
        const w = await createDealsQuery(t.ctx.db, { rare }).list(a.tenant.id, { ...base, search: term, stages: ["won"] });
        expect(w.total).toBe(
          one<{ n: number }>("SELECT count(*) AS n FROM deals WHERE tenant_id = ? AND stage = 'won' AND instr(search_text, ?) > 0", a.tenant.id, term).n,
        );
      }
    }
    // Pages of rare terms, from sorting the looked-up matches or walking the order's index, equal a direct scan.
    const assignee = one<{ id: string }>("SELECT assigned_to AS id FROM deals WHERE tenant_id = ? AND assigned_to IS NOT NULL LIMIT 1", a.tenant.id).id;
    const pageCases: Array<Partial<DealListQuery>> = [
      { search: word, sortBy: "value", sortDir: "desc" },
      { search: "ion", stages: ["won", "lost"], sortBy: "value", sortDir: "asc", page: 2 },
      { search: "renewal", stages: ["new"], sortBy: "created_at", sortDir: "desc" },
      { search: "renewal", assignee, sortBy: "title", sortDir: "asc" },
      { search: "ion", assignee: "", stages: ["qualified"], sortBy: "close_date", sortDir: "desc", page: 3, size: 7 },
    ];
    const direct = (c: DealListQuery): number[] => {
      const where = ["tenant_id = ?", "instr(search_text, ?) > 0"];
      const args: Array<string | number> = [a.tenant.id, c.search!];
      if (c.stages) where.push(`stage IN (${c.stages.map(() => "?").join(", ")})`), args.push(...c.stages);
      if (c.assignee === "") where.push("assigned_to IS NULL");
      else if (c.assignee) where.push("assigned_to = ?"), args.push(c.assignee);
      const col = { value: "value_cents", created_at: "created_at", title: "title_key", close_date: "close_date" }[c.sortBy as string]!;
      const dir = c.sortDir === "asc" ? "ASC" : "DESC";
      const sql = `SELECT seq FROM deals WHERE ${where.join(" AND ")} ORDER BY ${col} IS NULL, ${col} ${dir}, id ${dir} LIMIT ? OFFSET ?`;
      return (t.ctx.db.query(sql).values(...args, c.size, (c.page - 1) * c.size) as number[][]).map((r) => r[0]!);
    };
    for (const term of ["ion", "renewal"]) {
      const mine = one<{ n: number }>("SELECT count(*) AS n FROM deals WHERE tenant_id = ? AND assigned_to = ? AND stage = 'new' AND instr(search_text, ?) > 0", a.tenant.id, assignee, term).n;
      for (const rare of [1, 5000]) expect((await createDealsQuery(t.ctx.db, { rare }).list(a.tenant.id, { ...base, search: term, assignee, stages: ["new"] })).total).toBe(mine);
    }
    for (const c of pageCases) {
      const q = { ...base, ...c };
      const want = direct(q);
      expect(want.length).toBeGreaterThan(0);
      for (const pageBy of ["walk", "sort"] as const) expect((await createDealsQuery(t.ctx.db, { pageBy }).list(a.tenant.id, q)).seqs).toEqual(want);
    }
    // Other tenants' rows never count.
    expect((await createDealsQuery(t.ctx.db).list(b.tenant.id, base)).total).toBe(400);
  });
});

describe("suite seed", () => {
  test("creates a missing tenant, seeds it and prints the demo password", async () => {
    const db = join(dir, "cli.db");
    const run = (args: string[]) => Bun.spawnSync([process.execPath, "src/main.ts", ...args], { cwd: join(import.meta.dir, "..", ".."), env: { ...process.env, SUITE_DB: db } });
    const r = run(["seed", "--tenant", "demo", "--deals", "300"]);
    const out = r.stdout.toString();
    expect(r.exitCode).toBe(0);
    expect(out).toContain("created tenant demo with admin admin@demo.example");
    expect(out).toMatch(/seeded demo: 300 deals, \d+ accounts, \d+ contacts, \d+ users/);
    const password = /password: (\S+)/.exec(out)![1]!;
    expect(password.length).toBeGreaterThanOrEqual(12);
    const again = run(["seed", "--tenant", "demo", "--deals", "50"]);
    expect(again.exitCode).toBe(0);
    expect(again.stdout.toString()).not.toContain("created tenant");
    const bad = run(["seed", "--tenant", "demo", "--deals", "many"]);
    expect(bad.exitCode).toBe(64);
    expect(bad.stderr.toString()).toContain("--deals");
  });
});
