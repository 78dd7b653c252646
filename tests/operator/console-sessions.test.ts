import { describe, expect, test } from "bun:test";
import { operatorAppPerTest } from "./operator-kit";

/** Issue 34: an operator's own session list: see them, end one, end the others; audited; never another operator's. */

const setup = operatorAppPerTest();

describe("an operator's sessions", () => {
  test("lists their own live sessions with this one marked; ends one, then every other; audited", async () => {
    const { app, signIn } = await setup();
    const first = await signIn();
    const second = await signIn();
    const third = await signIn();
    const list = await app.json("GET", "/api/v1/operator/auth/sessions", { token: third });
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(3);
    expect(list.body.items.filter((s: { current: boolean }) => s.current)).toHaveLength(1);
    const mine = list.body.items.find((s: { current: boolean }) => s.current);
    expect(list.body.items[0].id).toBe(mine.id);

    const firstId = (await app.json("GET", "/api/v1/operator/auth/sessions", { token: first })).body.items.find((s: { current: boolean }) => s.current).id;
    const ended = await app.json("DELETE", `/api/v1/operator/auth/sessions/${firstId}`, { token: third });
    expect(ended.status).toBe(200);
    expect((await app.json("GET", "/api/v1/operator/auth/me", { token: first })).status).toBe(401);
    expect((await app.json("DELETE", `/api/v1/operator/auth/sessions/${firstId}`, { token: third })).body.code).toBe("session_not_found");
    expect((await app.json("GET", "/api/v1/operator/auth/sessions", { token: third })).body.items).toHaveLength(2);

    const others = await app.json("POST", "/api/v1/operator/auth/sessions/revoke-others", { token: third });
    expect(others.body).toMatchObject({ ended: 1, detail: "Signed out of 1 other session." });
    expect((await app.json("GET", "/api/v1/operator/auth/me", { token: second })).status).toBe(401);
    expect((await app.json("GET", "/api/v1/operator/auth/me", { token: third })).status).toBe(200);

    // Ending the current one signs it out, and clears its cookie.
    const self = await app.request("DELETE", `/api/v1/operator/auth/sessions/${mine.id}`, { token: third });
    expect(self.status).toBe(200);
    expect(self.headers.get("set-cookie")).toContain("svc_operator=;");
    expect((await app.json("GET", "/api/v1/operator/auth/me", { token: third })).status).toBe(401);

    const fourth = await signIn();
    const audit = (await app.json("GET", "/api/v1/operator/audit?size=100", { token: fourth })).body.items as { action: string; target: string | null; detail: Record<string, unknown> }[];
    expect(audit.filter((r) => r.action === "session.revoked").map((r) => r.detail)).toEqual([{ current: true }, { current: false }]);
    expect(audit.find((r) => r.action === "session.revoked_others")?.detail).toEqual({ ended: 1 });
    expect(audit.find((r) => r.action === "session.revoked" && r.detail.current === false)?.target).toBe(`operator_session:${firstId}`);
  });

  test("another operator's session is never listed nor ended; an organization's token is refused", async () => {
    const { app, clock, signIn } = await setup();
    const op = await signIn();
    const other = await app.ctx.operators.create("second@server.test", "quartz lantern meadow 8812");
    const { TOTP, Secret } = await import("otpauth");
    clock.t += 30_000;
    const login = await app.json("POST", "/api/v1/operator/auth/login", { body: { email: "second@server.test", password: "quartz lantern meadow 8812" } });
    const code = new TOTP({ secret: Secret.fromBase32(other.secret), algorithm: "SHA1", digits: 6, period: 30 }).generate({ timestamp: clock.t });
    const theirs = (await app.json("POST", "/api/v1/operator/auth/2fa/verify", { body: { temp_token: login.body.temp_token, code } })).body.access_token as string;
    const theirId = (await app.json("GET", "/api/v1/operator/auth/sessions", { token: theirs })).body.items[0].id;

    const mine = await app.json("GET", "/api/v1/operator/auth/sessions", { token: op });
    expect(mine.body.items.map((s: { id: string }) => s.id)).not.toContain(theirId);
    expect((await app.json("DELETE", `/api/v1/operator/auth/sessions/${theirId}`, { token: op })).status).toBe(404);
    expect((await app.json("POST", "/api/v1/operator/auth/sessions/revoke-others", { token: op })).body.ended).toBe(0);
    expect((await app.json("GET", "/api/v1/operator/auth/me", { token: theirs })).status).toBe(200);

    const acme = await app.signup("acme");
    const refused = await app.request("GET", "/api/v1/operator/auth/sessions", { token: acme.access_token });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toBe("Bearer");
    expect((await app.json("GET", "/api/v1/operator/auth/sessions", { token: op, tenant: "acme" })).status).toBe(404);
    // The operator's token lists no organization sessions either.
    expect((await app.json("GET", "/api/v1/auth/sessions", { token: op, tenant: "acme" })).status).toBe(401);
  });
});
