import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BACKENDS } from "./backends";
import { T0, addMember, type OrgBackend, orgBackend, signup } from "./org-fixture";

for (const backend of BACKENDS) {
  describe(`security and audit stores (${backend.name})`, () => {
    let b: OrgBackend;
    beforeAll(async () => {
      b = orgBackend(await backend.fresh());
    });
    afterAll(() => b.close());

    test("a fixed-window counter: counts, restarts when the window has passed, peek, clear, sweep", async () => {
      const s = b.org.security;
      expect(await s.hit("ip:1", T0, 1000)).toEqual({ count: 1, window_start: T0 });
      expect(await s.hit("ip:1", T0 + 500, 1000)).toEqual({ count: 2, window_start: T0 });
      expect(await s.peek("ip:1")).toEqual({ count: 2, window_start: T0, window_ms: 1000 });
      expect(await s.hit("ip:1", T0 + 1000, 1000)).toEqual({ count: 1, window_start: T0 + 1000 });
      expect(await s.hit("ip:2", T0, 60_000)).toEqual({ count: 1, window_start: T0 });
      expect(await s.peek("nope")).toBeNull();
      await s.clear("ip:2");
      expect(await s.peek("ip:2")).toBeNull();
      await s.hit("ip:3", T0, 10);
      expect(await s.sweep(T0 + 1500)).toBe(1);
      expect(await s.sweep(T0 + 2000)).toBe(1);
      expect(await s.peek("ip:1")).toBeNull();
    });

    test("counters by prefix: anyReached sees a used-up live window only; clearPrefix deletes exactly the keys that start with it", async () => {
      const s = b.org.security;
      // Addresses may hold LIKE's wildcards: the prefix is taken literally.
      for (const key of ["p:t1:a_b%c@x|1.1.1.1", "p:t1:a_b%c@x|2.2.2.2", "p:t1:aXbYc@x|3.3.3.3", "p:t1:a_b%c@xy|4.4.4.4"]) await s.hit(key, T0, 1000);
      await s.hit("p:t1:a_b%c@x|2.2.2.2", T0, 1000);
      expect(await s.anyReached("p:t1:a_b%c@x|", 2, T0 + 10)).toBe(true);
      expect(await s.anyReached("p:t1:a_b%c@x|", 3, T0 + 10)).toBe(false);
      expect(await s.anyReached("p:t1:a_b%c@x|", 2, T0 + 1000)).toBe(false);
      await s.clearPrefix("p:t1:a_b%c@x|");
      expect(await s.peek("p:t1:a_b%c@x|1.1.1.1")).toBeNull();
      expect(await s.peek("p:t1:a_b%c@x|2.2.2.2")).toBeNull();
      expect((await s.peek("p:t1:aXbYc@x|3.3.3.3"))?.count).toBe(1);
      expect((await s.peek("p:t1:a_b%c@xy|4.4.4.4"))?.count).toBe(1);
    });

    test("50 hits at once from several instances: every one counted once", async () => {
      const instances = [b.instance(), b.instance(), b.instance()];
      const r = await Promise.all(Array.from({ length: 50 }, (_, i) => instances[i % 3]!.security.hit("shared", T0, 60_000)));
      expect(r.map((x) => x.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      expect(await b.org.security.peek("shared")).toEqual({ count: 50, window_start: T0, window_ms: 60_000 });
    });

    test("audit rows: written, read newest first, limited, by tenant", async () => {
      const t = await signup(b.org, "audited");
      await b.org.security.audit({ tenantId: t.tenantId, userId: t.adminId, action: "a.one", ip: "1.2.3.4", userAgent: "ua", detail: { k: 1 } }, T0 + 1);
      await b.org.security.audit({ tenantId: t.tenantId, userId: null, action: "a.two", ip: null, userAgent: null }, T0 + 2);
      await b.org.security.audit({ tenantId: null, userId: null, action: "operator", ip: null, userAgent: null }, T0 + 3);
      const rows = await b.org.security.auditForTenant(t.tenantId);
      expect(rows.map((r) => [r.action, r.user_id, r.ip, r.user_agent, r.detail, r.created_at, r.tenant_id])).toEqual([
        ["a.two", null, null, null, null, T0 + 2, t.tenantId],
        ["a.one", t.adminId, "1.2.3.4", "ua", '{"k":1}', T0 + 1, t.tenantId],
        ["tenant.signup", t.adminId, "127.0.0.1", "test", '{"subdomain":"audited"}', T0, t.tenantId],
      ]);
      expect(typeof rows[0]!.id).toBe("number");
      expect(await b.org.security.auditForTenant(t.tenantId, 1)).toHaveLength(1);
    });

    test("the key store: rows an earlier release kept, forgotten on request; whether accounts exist", async () => {
      const keys = await b.keys(["session_key", "encryption_key"]);
      expect(keys.holdsAccounts()).toBe(Number(await b.value("SELECT count(*) AS n FROM users")) > 0);
      await b.value("INSERT INTO settings (key, value) VALUES ('session_key', 'kept-value')");
      const again = await b.keys(["session_key", "encryption_key"]);
      expect(again.stored(["session_key", "encryption_key"])).toEqual({ session_key: "kept-value" });
      again.forget(["session_key"]);
      await again.flush();
      expect(again.stored(["session_key"])).toEqual({});
      expect(await b.value("SELECT count(*) AS n FROM settings WHERE key = 'session_key'")).toBe(0);
    });

    test("reading the audit log: filters, order, pages, totals and keyset cursors", async () => {
      const t = await signup(b.org, "reader");
      const m = await addMember(b.org, t, "reader-m@x.test");
      const other = await signup(b.org, "reader-other");
      // Five rows of our own at T0+10..T0+13 (two in one millisecond), one elsewhere.
      const write = (userId: string | null, action: string, at: number, tenantId = t.tenantId) =>
        b.org.security.audit({ tenantId, userId, action, ip: null, userAgent: null }, at);
      await write(t.adminId, "login.success", T0 + 10_000);
      await write(m.id, "login.success", T0 + 11_000);
      await write(m.id, "deal.created", T0 + 12_000);
      await write(t.adminId, "deal.created", T0 + 12_000);
      await write("gone-user", "login.failed", T0 + 13_000);
      await write(other.adminId, "login.success", T0 + 12_000, other.tenantId);
      const all = { userId: null, actions: null, since: T0 + 10_000, until: T0 + 13_000 };
      const page = await b.org.audit.page(t.tenantId, all, 10, 0);
      expect(page.total).toBe(5);
      expect(page.rows.map((r) => [r.action, r.user_email, r.created_at])).toEqual([
        ["login.failed", null, T0 + 13_000],
        ["deal.created", "admin@reader.test", T0 + 12_000],
        ["deal.created", "reader-m@x.test", T0 + 12_000],
        ["login.success", "reader-m@x.test", T0 + 11_000],
        ["login.success", "admin@reader.test", T0 + 10_000],
      ]);
      expect(page.rows[1]!.user_name).toBe("Ada Admin");
      expect(page.rows[0]!.id).toBeGreaterThan(page.rows[1]!.id);
      const second = await b.org.audit.page(t.tenantId, all, 2, 2);
      expect(second).toEqual({ rows: page.rows.slice(2, 4), total: 5 });
      expect((await b.org.audit.page(t.tenantId, { ...all, until: T0 + 12_000, since: T0 + 11_000 }, 10, 0)).total).toBe(3);
      const mine = await b.org.audit.page(t.tenantId, { ...all, userId: m.id }, 10, 0);
      expect(mine.rows.map((r) => r.action)).toEqual(["deal.created", "login.success"]);
      const logins = await b.org.audit.page(t.tenantId, { ...all, actions: ["login.success", "login.failed"] }, 10, 0);
      expect(logins.total).toBe(3);
      expect((await b.org.audit.page(t.tenantId, { ...all, userId: t.adminId, actions: ["deal.created"] }, 10, 0)).rows.map((r) => r.user_id)).toEqual([
        t.adminId,
      ]);
      expect((await b.org.audit.page(t.tenantId, { ...all, actions: [] }, 10, 0)).total).toBe(0);
      // Keyset: two at a time, the same rows in the same order as the page.
      const seen = [];
      let cursor = null;
      for (;;) {
        const rows = await b.org.audit.after(t.tenantId, all, cursor, 2);
        if (rows.length === 0) break;
        seen.push(...rows);
        const last = rows[rows.length - 1]!;
        cursor = { createdAt: last.created_at, id: last.id };
      }
      expect(seen).toEqual(page.rows);
    });
  });
}
