import { expect } from "bun:test";
import type { TestApp } from "../../helpers";
import { clockedApp, login } from "../support";
import { appCode } from "./rfc6238";

export const TWO_FA = "/api/v1/auth/2fa";
export const SETUP = `${TWO_FA}/setup`;
export const CONFIRM = `${TWO_FA}/confirm`;
export const VERIFY = `${TWO_FA}/verify`;
export const DISABLE = `${TWO_FA}/disable`;
export const STATUS = `${TWO_FA}/status`;
export const BACKUP_CODES = `${TWO_FA}/backup-codes`;

/** One time step, and a little more than the 2FA rate-limit window. */
export const STEP_MS = 30_000;
export const NEXT_MINUTE = 61_000;

/** A signed-up organization on a hand-moved clock. */
export async function orgWithClock(apps: TestApp[], subdomain = "acme") {
  const { t, clock } = clockedApp();
  apps.push(t);
  const org = await t.signup(subdomain);
  return { t, clock, org };
}

/** An organization whose admin has 2FA on, past the step that confirm used and into a fresh rate-limit window. */
export async function enabledOrg(apps: TestApp[]) {
  const o = await orgWithClock(apps);
  const factor = await enable(o.t, o.org.access_token);
  o.clock.advance(NEXT_MINUTE);
  return { ...o, ...factor };
}

/** Runs setup and confirm (with the tests' own RFC 6238 code); answers the secret and backup codes. */
export async function enable(t: TestApp, token: string) {
  const setup = await t.json("POST", SETUP, { token });
  expect(setup.status).toBe(200);
  const { secret, backup_codes } = setup.body as { secret: string; backup_codes: string[] };
  const confirm = await t.json("POST", CONFIRM, { token, body: { code: appCode(secret, t.ctx.now()) } });
  expect(confirm.status).toBe(200);
  return { secret, backupCodes: backup_codes };
}

/** Password login of a user with 2FA on: answers the temp_token of the challenge. */
export async function challenge(t: TestApp, email: string, password: string, headers: Record<string, string> = {}): Promise<string> {
  const r = await login(t, email, password, headers);
  expect(r.status).toBe(200);
  expect(r.body.requires_2fa).toBe(true);
  return r.body.temp_token as string;
}

export const verify = (t: TestApp, temp_token: string, code: string, headers: Record<string, string> = {}) =>
  t.json("POST", VERIFY, { body: { temp_token, code }, headers });
