import { afterEach } from "bun:test";
import { Secret, TOTP } from "otpauth";
import { type TestApp, type TestAppOptions, testApp } from "../helpers";

export const OPERATOR_EMAIL = "ops@server.test";
export const OPERATOR_PASSWORD = "plum kettle orbit 4471";

/** A test app on a clock the test moves, with one operator made as `suite operator create` makes one. */
export async function operatorApp(env: Record<string, string> = {}, opts: Pick<TestAppOptions, "db" | "backend"> = {}) {
  const clock = { t: Date.UTC(2026, 10, 27, 9, 0, 0) };
  const app: TestApp = testApp({ now: () => clock.t, env, ...opts });
  const made = await app.ctx.operators.create(OPERATOR_EMAIL, OPERATOR_PASSWORD);
  const code = (secret = made.secret) => new TOTP({ secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30 }).generate({ timestamp: clock.t });
  /** Password then code: the operator's token. Each sign-in moves the clock one TOTP step on (a code is accepted once). */
  async function signIn(): Promise<string> {
    clock.t += 30_000;
    const first = await app.json("POST", "/api/v1/operator/auth/login", { body: { email: OPERATOR_EMAIL, password: OPERATOR_PASSWORD } });
    if (first.status !== 200) throw new Error(`login: ${first.status} ${JSON.stringify(first.body)}`);
    const second = await app.json("POST", "/api/v1/operator/auth/2fa/verify", { body: { temp_token: first.body.temp_token, code: code() } });
    if (second.status !== 200) throw new Error(`verify: ${second.status} ${JSON.stringify(second.body)}`);
    return second.body.access_token as string;
  }
  return { app, clock, secret: made.secret, otpauthUrl: made.otpauthUrl, backupCodes: made.backupCodes, code, signIn };
}

/**
 * The test file's `setup`: an operatorApp that is closed after the test that made it (one at a
 * time), registered here once per file.
 */
export function operatorAppPerTest(): (env?: Record<string, string>, opts?: Pick<TestAppOptions, "db" | "backend">) => ReturnType<typeof operatorApp> {
  let close: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await close?.();
    close = null;
  });
  return async (env, opts) => {
    const o = await operatorApp(env, opts);
    close = o.app.close;
    return o;
  };
}
