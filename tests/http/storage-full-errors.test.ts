import { expect, test } from "bun:test";
import { ON_POSTGRES } from "../support/backend";
import { testApp } from "../helpers";
import { expectError } from "./support";

/**
 * Issue 28: a write the database has no room for answers 507 storage_full (Retry-After, a plain
 * sentence), never 500, on both backends, with each backend's own error: SQLite's SQLITE_FULL
 * (the file held at its page count by max_page_count, which fails exactly as a full disk does),
 * PostgreSQL's 53100 disk_full (raised by the server itself). The next write after room returns
 * succeeds without a restart.
 */
test("a write the database has no room for is 507 storage_full, and writes resume when room returns", async () => {
  const t = testApp();
  try {
    const org = await t.signup("fullup");
    const as = { token: org.access_token };
    expect((await t.json("POST", "/api/v1/crm/accounts", { ...as, body: { name: "Before" } })).status).toBe(201);

    let restore: () => void;
    if (ON_POSTGRES) {
      const crm = t.ctx.repos.crm;
      const insert = crm.insertAccount;
      // PostgreSQL itself raises the error a full disk raises (SQLSTATE 53100).
      crm.insertAccount = async () => void (await t.ctx.pg!.unsafe("DO $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100'; END $$"));
      restore = () => (crm.insertAccount = insert);
    } else {
      const db = t.ctx.db;
      const pages = (db.query("PRAGMA page_count").get() as { page_count: number }).page_count;
      db.run(`PRAGMA max_page_count = ${pages}`);
      restore = () => db.run("PRAGMA max_page_count = 4294967294");
    }
    // Rows big enough to need new pages once the free ones are used.
    let refused: Awaited<ReturnType<typeof t.json>> | null = null;
    for (let i = 0; i < 400 && !refused; i++) {
      const r = await t.json("POST", "/api/v1/crm/accounts", { ...as, body: { name: `Full ${i}`, industry: "x".repeat(100), domain: `d${i}.${"y".repeat(60)}.example` } });
      if (r.status !== 201) refused = r;
    }
    expect(refused).not.toBeNull();
    expectError(refused!, 507, "storage_full");
    expect(refused!.headers.get("retry-after")).toBe("60");
    expect(refused!.body.detail).toBe(
      "The server has run out of storage space, so this change was not saved. Try again in a few minutes; if it keeps happening, tell the server's operator.",
    );
    expect(t.logs.filter((l) => l.level === "error")).toEqual([]);
    expect(t.logs.some((l) => l.msg === "storage full" && l.level === "warn")).toBe(true);
    // Reads go on.
    expect((await t.json("GET", "/api/v1/crm/accounts", as)).status).toBe(200);

    restore();
    expect((await t.json("POST", "/api/v1/crm/accounts", { ...as, body: { name: "After" } })).status).toBe(201);
  } finally {
    await t.close();
  }
});
