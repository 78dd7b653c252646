import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { type TestApp, testApp } from "../helpers";
import { noteSecret } from "../security/ledger";
import { appCode } from "../auth/two-factor/rfc6238";
import { enable, verify } from "../auth/two-factor/support";
import { accept, invited } from "../team/support";
import { ok, suite } from "./user-tenant-kit";
import { testSql } from "../support/sql";

/**
 * What was under way when the operator disabled the organization opens no session while it is
 * disabled: a 2FA challenge answered afterwards, an invitation accepted afterwards. Neither is
 * spent by the refusal: both work once the organization is enabled again.
 */

const dir = mkdtempSync(join(tmpdir(), "suite-tenant-flows-"));
const db = join(dir, "suite.db");
const PASSWORD = "a member password";
noteSecret("password", PASSWORD);
const SLOW = 120_000;
let t: TestApp;

beforeAll(() => {
  t = testApp({ db });
});
afterAll(() => {
  t.close();
  rmSync(dir, { recursive: true, force: true });
});

test("a pending 2FA challenge and a pending invitation are refused with 403 tenant_disabled, and work after enable", async () => {
  const admin = await t.signup("acme");
  const { secret } = await enable(t, admin.access_token);
  const login = await t.json("POST", "/api/v1/auth/login", { body: { email: admin.email, password: admin.password }, tenant: "acme" });
  expect(login.body.requires_2fa).toBe(true);
  const tempToken = login.body.temp_token as string;
  const { token: inviteToken } = await invited(t, admin, "joiner@acme.test");

  ok(await suite(db, ["tenant", "disable", "acme"]));
  // A code of the next time step: the confirm in enable() used the current one.
  const code = appCode(secret, t.ctx.now(), 1);
  const refusedVerify = await verify(t, tempToken, code);
  expect(refusedVerify.status).toBe(403);
  expect(refusedVerify.body.code).toBe("tenant_disabled");
  const refusedAccept = await accept(t, { token: inviteToken, password: PASSWORD });
  expect(refusedAccept.status).toBe(403);
  expect(refusedAccept.body.code).toBe("tenant_disabled");
  expect(await testSql(t.ctx).get("SELECT count(*) AS n FROM users WHERE email = 'joiner@acme.test'")).toEqual({ n: 0 });

  ok(await suite(db, ["tenant", "enable", "acme"]));
  const verified = await verify(t, tempToken, code);
  expect(verified.status).toBe(200);
  expect(verified.body.access_token).toBeString();
  expect((await accept(t, { token: inviteToken, password: PASSWORD })).status).toBe(201);
}, SLOW);
