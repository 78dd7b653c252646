import { afterAll, describe, expect, test } from "bun:test";
import type { TestApp } from "../helpers";
import { login, sessionIdOf } from "../auth/support";
import { DISABLE, NEXT_MINUTE, STEP_MS, enable, orgWithClock } from "../auth/two-factor/support";
import { appCode } from "../auth/two-factor/rfc6238";
import { EVENTS } from "./support";

/** Sign-ins, ended sessions and the second factor write their events too, for admins only; never a token or code. */
const apps: TestApp[] = [];
afterAll(async () => {
  for (const a of apps) await a.close();
});

describe("sign-in, session and second-factor events", () => {
  test("user.signed_in, session.revoked, user.two_factor_enabled and _disabled, each in its write's transaction", async () => {
    const { t, clock, org } = await orgWithClock(apps, "evacct");
    const list = async () => (await t.json("GET", `${EVENTS}?limit=100`, { token: org.access_token })).body.items as Array<{ type: string; actor: any; data: any }>;
    const signedIn = await login(t, org.email, org.password, { host: "evacct.localhost" });
    expect(signedIn.status).toBe(200);
    const second = signedIn.body.access_token as string;
    const sessionId = await sessionIdOf(t, second);
    expect((await t.json("POST", "/api/v1/auth/sessions/revoke", { token: org.access_token, body: { session_id: sessionId } })).status).toBe(200);
    const { secret } = await enable(t, org.access_token);
    clock.advance(NEXT_MINUTE);
    const off = await t.json("POST", DISABLE, { token: org.access_token, body: { password: org.password, code: appCode(secret, t.ctx.now() + STEP_MS) } });
    expect(off.status).toBe(200);

    const items = (await list()).filter((e) => /^(user|session)\./.test(e.type)).reverse();
    expect(items.map((e) => e.type)).toEqual(["user.signed_in", "session.revoked", "user.two_factor_enabled", "user.two_factor_disabled"]);
    expect(items[0]).toMatchObject({ actor: { type: "user", id: org.user.id }, data: { user_id: org.user.id, session_id: sessionId, method: "password" } });
    expect(items[1]!.data).toMatchObject({ user_id: org.user.id, session_id: sessionId, count: 1 });
    const text = JSON.stringify(items);
    for (const secretText of [second, signedIn.body.refresh_token, secret]) expect(text).not.toContain(secretText);
  });
});
