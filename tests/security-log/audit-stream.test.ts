import { afterAll, expect, test } from "bun:test";
import type { AuditFilter, AuditLogRow } from "../../src/security-log/repo";
import { createSqliteAuditStore as createAuditRepo } from "../../src/stores/sqlite/audit";
import { CSV_BATCH, createAuditService } from "../../src/security-log/service";
import type { Principal } from "../../src/auth/service";
import { testApp } from "../helpers";
import { ON_POSTGRES } from "../support/backend";

const t = testApp();
afterAll(() => t.close());

const admin = { tenantId: "t1", userId: "u1", role: "admin" } as unknown as Principal;
const all: AuditFilter = { userId: null, actions: null, since: 0, until: Number.MAX_SAFE_INTEGER };

test("a CSV download reads one batch per pull, never the whole log, and moves its keyset cursor back in time", async () => {
  const calls: Array<{ cursor: unknown; limit: number }> = [];
  let made = 0;
  const total = CSV_BATCH * 3 + 7;
  const repo = {
    page: async () => ({ rows: [], total: 0 }),
    after: async (_tenant: string, _f: AuditFilter, cursor: { createdAt: number; id: number } | null, limit: number): Promise<AuditLogRow[]> => {
      calls.push({ cursor, limit });
      const n = Math.min(limit, total - made);
      return Array.from({ length: n }, () => {
        made++;
        return { id: total - made + 1, user_id: null, user_email: null, user_name: null, action: "a", ip: null, user_agent: null, detail: null, created_at: 1_000_000 - made };
      });
    },
  };
  const service = createAuditService({ now: () => 2_000_000, repo: repo as never });
  const reader = service.csv(admin, all).body!.getReader();
  await reader.read(); // the header
  await reader.read(); // the first batch
  expect(calls.length).toBe(1);
  let lines = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    lines += new TextDecoder().decode(value).split("\r\n").length - 1;
  }
  expect(lines).toBe(total - CSV_BATCH);
  expect(calls.map((c) => c.limit)).toEqual([CSV_BATCH, CSV_BATCH, CSV_BATCH, CSV_BATCH]);
  expect(calls[0]!.cursor).toBeNull();
  expect(calls[1]!.cursor).toEqual({ createdAt: 1_000_000 - CSV_BATCH, id: total - CSV_BATCH + 1 });
});

// SQLite's query plans (EXPLAIN QUERY PLAN) of the SQLite audit store.
test.skipIf(ON_POSTGRES)("the reads use the indexes that start with tenant_id and serve newest first, without sorting", () => {
  createAuditRepo(t.ctx.db);
  const plan = (sql: string) => (t.ctx.db.query(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join(" | ");
  const base = "SELECT a.id FROM audit_log a WHERE a.tenant_id = 'x' AND a.created_at >= 0 AND (a.created_at, a.id) < (99, 99)";
  const byTime = plan(`${base} AND a.action IN (SELECT value FROM json_each('["a"]')) ORDER BY a.created_at DESC, a.id DESC LIMIT 20`);
  expect(byTime).toContain("audit_by_tenant_time");
  expect(byTime).not.toContain("TEMP B-TREE");
  const byUser = plan(`${base} AND a.user_id = 'u' ORDER BY a.created_at DESC, a.id DESC LIMIT 20`);
  expect(byUser).toContain("audit_by_tenant_user");
  expect(byUser).not.toContain("TEMP B-TREE");
});

// The SQLite store's walks in steps of index entries (src/stores/sqlite/audit.ts): a page's total,
// its skip to a deep offset and a CSV batch equal a direct read, and a step at a time lets the
// event loop turn.
test.skipIf(ON_POSTGRES)("totals, deep pages and CSV batches walked a few index entries a step equal a direct read, the event loop turning between steps", async () => {
  const db = t.ctx.db;
  const tenant = "t_audit_steps";
  db.run("INSERT INTO tenants (id, subdomain, name, created_at) VALUES (?1, 'auditsteps', 'Audit steps', 0)", [tenant]);
  const actions = ["auth.login", "auth.login_failed", "crm.import"];
  const insert = db.prepare("INSERT INTO audit_log (tenant_id, user_id, action, ip, user_agent, detail, created_at) VALUES (?1, ?2, ?3, NULL, NULL, NULL, ?4)");
  // 230 rows, several sharing a millisecond (the cursor's id decides), one action rare.
  db.transaction(() => {
    for (let i = 0; i < 230; i++) insert.run(tenant, i % 4 === 0 ? "u_a" : null, i % 29 === 0 ? "crm.import" : actions[i % 2]!, 1_000 + Math.floor(i / 3));
  })();
  const steps = createAuditRepo(db, 7);
  const direct = (f: AuditFilter) => {
    const where = [
      "tenant_id = ?1 AND created_at >= ?2 AND created_at <= ?3",
      ...(f.userId !== null ? [`user_id = '${f.userId}'`] : []),
      ...(f.actions !== null ? [`action IN (${f.actions.map((a) => `'${a}'`).join(", ")})`] : []),
    ].join(" AND ");
    return (db.query(`SELECT id FROM audit_log WHERE ${where} ORDER BY created_at DESC, id DESC`).all(tenant, f.since, f.until) as Array<{ id: number }>).map((r) => r.id);
  };
  const filters: AuditFilter[] = [
    all,
    { ...all, actions: ["crm.import"] },
    { ...all, actions: ["auth.login", "crm.import"] },
    { ...all, userId: "u_a" },
    { ...all, userId: "u_a", actions: ["auth.login_failed"] },
    { ...all, since: 1_020, until: 1_050 },
    { ...all, actions: ["nothing.like.it"] },
  ];
  try {
    for (const f of filters) {
      const want = direct(f);
      for (const offset of [0, 1, 6, 7, 8, 50, 149, want.length - 1, want.length, want.length + 5]) {
        const { rows, total } = await steps.page(tenant, f, 10, Math.max(0, offset));
        expect(total).toBe(want.length);
        expect(rows.map((r) => r.id)).toEqual(want.slice(Math.max(0, offset), Math.max(0, offset) + 10));
      }
      // A CSV download's batches, by keyset: every row once, in order, a batch of 25 at a time.
      const got: number[] = [];
      let cursor: { createdAt: number; id: number } | null = null;
      for (;;) {
        const batch = await steps.after(tenant, f, cursor, 25);
        got.push(...batch.map((r) => r.id));
        if (batch.length < 25) break;
        cursor = { createdAt: batch.at(-1)!.created_at, id: batch.at(-1)!.id };
      }
      expect(got).toEqual(want);
    }
    // 230 entries in steps of 7: another task's turns (a chain of immediates) come between the
    // steps of one page's walks (total, skip, rows), about 33 + 29 + 1 of them.
    let reading = true;
    let turns = 0;
    const other = (async () => {
      while (reading) {
        turns++;
        await new Promise((r) => setImmediate(r));
      }
    })();
    await steps.page(tenant, all, 10, 200);
    reading = false;
    await other;
    expect(turns).toBeGreaterThan(40);
  } finally {
    db.run("DELETE FROM audit_log WHERE tenant_id = ?1", [tenant]);
    db.run("DELETE FROM tenants WHERE id = ?1", [tenant]);
  }
});
