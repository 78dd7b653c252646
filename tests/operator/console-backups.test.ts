import { describe, expect, test } from "bun:test";
import { ON_POSTGRES } from "../support/backend";
import { operatorAppPerTest } from "./operator-kit";

/**
 * Issue 34: the console's backups where the suite makes none: on PostgreSQL (pg_dump, base
 * backups) and on an in-memory database. The files themselves: console-backups-files.test.ts.
 */

const setup = operatorAppPerTest();

describe("backups where the suite makes none", () => {
  test("the screen says what to use instead, and nothing can be started, linked, deleted or scheduled", async () => {
    const { app, signIn } = await setup();
    const op = await signIn();
    const view = await app.json("GET", "/api/v1/operator/backups", { token: op });
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({ available: false, folder: null, backups: [], running: null, last: null });
    expect(view.body.schedule).toEqual({ source: "none", enabled: false, at_utc: null, every_hours: null, keep: null, next_at: null });
    expect(view.body.note).toContain(ON_POSTGRES ? "pg_dump" : "in memory");
    for (const [method, path, body] of [
      ["POST", "/api/v1/operator/backups", undefined],
      ["PUT", "/api/v1/operator/backups/schedule", { enabled: true, at_utc: "03:00", keep: 7 }],
      ["POST", "/api/v1/operator/backups/suite-x.db/link", undefined],
      ["DELETE", "/api/v1/operator/backups/suite-x.db", undefined],
    ] as const) {
      const r = await app.json(method, path, { token: op, body });
      expect(r.status).toBe(409);
      expect(r.body.code).toBe("backups_unavailable");
      expect(r.body.detail).toBe(view.body.note);
    }
    expect((await app.json("GET", "/api/v1/operator/audit?size=100", { token: op })).body.items.some((r: { action: string }) => r.action.startsWith("backup."))).toBe(false);
  });

  test("an organization's admin token is no operator's, and the console is not on an organization's host", async () => {
    const { app, signIn } = await setup();
    const acme = await app.signup("acme");
    const op = await signIn();
    const byAdmin = await app.request("GET", "/api/v1/operator/backups", { token: acme.access_token });
    expect(byAdmin.status).toBe(401);
    expect(byAdmin.headers.get("www-authenticate")).toBe("Bearer");
    expect((await app.json("POST", "/api/v1/operator/backups", { token: acme.access_token })).status).toBe(401);
    expect((await app.json("GET", "/api/v1/operator/backups", { token: op, tenant: "acme" })).status).toBe(404);
    // And the operator's token opens nothing of the organization's.
    expect((await app.json("GET", "/api/v1/auth/me", { token: op, tenant: "acme" })).status).toBe(401);
  });
});
