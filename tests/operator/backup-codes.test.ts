import { describe, expect, test } from "bun:test";
import { testSql } from "../support/sql";
import { OPERATOR_EMAIL, OPERATOR_PASSWORD, operatorAppPerTest } from "./operator-kit";

/** Issue 34: operators' backup codes: made at create, each accepted once at the code step, new ones from the console behind step-up, kept hashed. */

const setup = operatorAppPerTest();
type App = Awaited<ReturnType<ReturnType<typeof operatorAppPerTest>>>["app"];

async function withCode(app: App, code: string) {
  const first = await app.json("POST", "/api/v1/operator/auth/login", { body: { email: OPERATOR_EMAIL, password: OPERATOR_PASSWORD } });
  expect(first.status).toBe(200);
  return app.json("POST", "/api/v1/operator/auth/2fa/verify", { body: { temp_token: first.body.temp_token, code } });
}

describe("operators' backup codes", () => {
  test("ten made with the operator; each signs in once (any case, dash optional); audited with how many are left; stored hashed", async () => {
    const { app, backupCodes, signIn } = await setup();
    expect(backupCodes).toHaveLength(10);
    expect(new Set(backupCodes).size).toBe(10);
    for (const c of backupCodes) expect(c).toMatch(/^[0-9a-z]{4}-[0-9a-z]{4}$/);
    const ok = await withCode(app, backupCodes[0]!.replace("-", "").toUpperCase());
    expect(ok.status).toBe(200);
    const again = await withCode(app, backupCodes[0]!);
    expect(again.status).toBe(401);
    expect(again.body.code).toBe("invalid_2fa_code");
    expect((await withCode(app, "zzzz-zzzz")).status).toBe(401);
    const me = await app.json("GET", "/api/v1/operator/auth/me", { token: ok.body.access_token });
    expect(me.body.backup_codes_left).toBe(9);
    const op = await signIn();
    const audit = (await app.json("GET", "/api/v1/operator/audit?size=100", { token: op })).body.items as { action: string; detail: Record<string, unknown> }[];
    expect(audit.find((r) => r.action === "sign_in.backup_code_used")?.detail).toEqual({ remaining: 9 });
    expect(audit.filter((r) => r.action === "sign_in.code_failure")).toHaveLength(2);
    // Only keyed hashes are stored: no code, with or without its dash, is in the table.
    const rows = await testSql(app.ctx).all<{ code_hash: string }>("SELECT code_hash FROM operator_backup_codes");
    expect(rows).toHaveLength(10);
    for (const c of backupCodes) for (const r of rows) expect(r.code_hash.includes(c.replace("-", ""))).toBe(false);
  });

  test("new codes from the console need step-up; the old ones stop working; audited", async () => {
    const { app, clock, backupCodes, signIn } = await setup();
    const op = await signIn();
    clock.t += 11 * 60_000;
    const refused = await app.json("POST", "/api/v1/operator/auth/backup-codes", { token: op });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("reauthentication_required");
    expect((await app.json("POST", "/api/v1/operator/auth/reauthenticate", { token: op, body: { password: OPERATOR_PASSWORD } })).status).toBe(200);
    const fresh = await app.json("POST", "/api/v1/operator/auth/backup-codes", { token: op });
    expect(fresh.status).toBe(200);
    expect(fresh.body.codes).toHaveLength(10);
    expect(fresh.body.codes.some((c: string) => backupCodes.includes(c))).toBe(false);
    expect((await withCode(app, backupCodes[1]!)).status).toBe(401);
    expect((await withCode(app, fresh.body.codes[0])).status).toBe(200);
    const actions = (await app.json("GET", "/api/v1/operator/audit?size=100", { token: op })).body.items.map((r: { action: string }) => r.action);
    expect(actions).toContain("backup_codes.regenerated");
    // An organization's token makes no operator's codes.
    const acme = await app.signup("acme");
    expect((await app.json("POST", "/api/v1/operator/auth/backup-codes", { token: acme.access_token })).status).toBe(401);
  });
});
