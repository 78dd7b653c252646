import { afterAll, describe, expect, test } from "bun:test";
import { BACKENDS, type Backend } from "../stores/backends";
import { testSql, toPgPlaceholders } from "./sql";

test("placeholders become PostgreSQL's, quoted text left alone", () => {
  expect(toPgPlaceholders("SELECT * FROM t WHERE a = ?1 AND b = ?2 OR c = ?1")).toBe("SELECT * FROM t WHERE a = $1 AND b = $2 OR c = $1");
  expect(toPgPlaceholders("UPDATE t SET a = ? WHERE b = ? AND c = ?")).toBe("UPDATE t SET a = $1 WHERE b = $2 AND c = $3");
  expect(toPgPlaceholders("SELECT '?1 ?' AS q, \"a?\" FROM t WHERE x = ?12")).toBe("SELECT '?1 ?' AS q, \"a?\" FROM t WHERE x = $12");
  expect(toPgPlaceholders("SELECT 'it''s ?' WHERE x = ?")).toBe("SELECT 'it''s ?' WHERE x = $1");
});

for (const backend of BACKENDS) {
  describe(backend.name, () => {
    let b: Backend;
    const sql = async () => {
      b ??= await backend.fresh();
      return testSql(b.kind === "sqlite" ? { db: b.db, pg: null } : { pg: b.pg });
    };
    afterAll(() => b?.close());

    test("run, get and all see the same rows, with numbers for counts and times", async () => {
      const s = await sql();
      expect(await s.run("INSERT INTO tenants (id, name, subdomain, created_at) VALUES (?1, ?2, ?3, ?4)", "t1", "One", "one", 1700000000000)).toBe(1);
      expect(await s.run("INSERT INTO tenants (id, name, subdomain, created_at) VALUES (?, ?, ?, ?)", "t2", "Two?", "two", 1700000000001)).toBe(1);
      expect(await s.get("SELECT id, name, created_at FROM tenants WHERE subdomain = ?1", "two")).toEqual({ id: "t2", name: "Two?", created_at: 1700000000001 });
      expect(await s.get("SELECT id FROM tenants WHERE subdomain = ?1", "none")).toBeNull();
      expect(await s.all("SELECT id FROM tenants WHERE created_at >= ?1 ORDER BY created_at", 0)).toEqual([{ id: "t1" }, { id: "t2" }]);
      expect(await s.get("SELECT count(*) AS n FROM tenants WHERE name <> '?'")).toEqual({ n: 2 });
      expect(await s.run("UPDATE tenants SET name = ?2 WHERE id = ?1 OR id = ?3", "t1", "Renamed", "t2")).toBe(2);
      expect(await s.run("DELETE FROM tenants WHERE id = ?", "nothing")).toBe(0);
    });
  });
}
