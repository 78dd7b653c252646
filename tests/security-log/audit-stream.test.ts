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
