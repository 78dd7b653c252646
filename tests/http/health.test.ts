import { describe, expect, test } from "bun:test";
import { testApp } from "../helpers";
import { REQUEST_ID, expectError } from "./support";
import { closeDatabase } from "../support/backend";

describe("GET /api/v1/health", () => {
  test("200 {status: ok} when the database answers", async () => {
    const t = testApp();
    try {
      const r = await t.json("GET", "/api/v1/health");
      expect(r.status).toBe(200);
      expect(r.body).toStrictEqual({ status: "ok" });
      expect(r.headers.get("content-type")).toStartWith("application/json");
      expect(r.headers.get("cache-control")).toBe("no-store");
      expect(r.headers.get("x-request-id")).toMatch(REQUEST_ID);
    } finally {
      t.close();
    }
  });

  test("needs no credentials and no tenant, and ignores both", async () => {
    const t = testApp();
    try {
      expect((await t.json("GET", "/api/v1/health", { tenant: "nosuch" })).body).toEqual({ status: "ok" });
      expect((await t.json("GET", "/api/v1/health", { token: "garbage", headers: { "x-tenant": "other" } })).body).toEqual({ status: "ok" });
    } finally {
      t.close();
    }
  });

  test("503 unavailable once the database is closed", async () => {
    const t = testApp();
    expect((await t.json("GET", "/api/v1/health")).status).toBe(200);
    await closeDatabase(t.ctx);
    const r = await t.json("GET", "/api/v1/health");
    expect(r.body).toEqual({ detail: "The database does not answer.", code: "unavailable" });
    expectError(r, 503, "unavailable");
    // A known outage, not a crash: no error line, one access line.
    expect(t.logs.filter((l) => l.level === "error")).toEqual([]);
    expect(t.logs.at(-1)).toMatchObject({ msg: "request", path: "/api/v1/health", status: 503 });
  });

  test("503 also when the app's statements were prepared before the close (a busy app)", async () => {
    const t = testApp();
    const org = await t.signup("busy");
    await closeDatabase(t.ctx);
    // Statements prepared while open keep a closed connection half alive: health must not trust them.
    const r = await t.json("GET", "/api/v1/health");
    expectError(r, 503, "unavailable");
    expect(org.tenant.subdomain).toBe("busy");
  });

  test("only under /api/v1, and only GET (or HEAD)", async () => {
    const t = testApp();
    try {
      expectError(await t.json("GET", "/health"), 404, "not_found");
      expectError(await t.json("GET", "/api/health"), 404, "not_found");
      const head = await t.request("HEAD", "/api/v1/health");
      expect(head.status).toBe(200);
    } finally {
      t.close();
    }
  });
});
