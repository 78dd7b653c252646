import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestApp, testApp } from "../helpers";

/**
 * GET /api/v1/tls/ask: Caddy's question before an on-demand certificate. The app listens on
 * loopback here, so the server sees a real peer address, as Caddy's request would give it.
 */
let t: TestApp;
let base = "";
beforeAll(async () => {
  t = testApp();
  await t.signup("acme");
  await t.signup("bolt");
  await t.ctx.tenants.setDisabled("bolt", true, { command: "tenant disable" });
  t.app.listen({ hostname: "127.0.0.1", port: 0 });
  base = `http://127.0.0.1:${t.app.server!.port}`;
});
afterAll(async () => {
  await t.app.stop(true);
  t.close();
});

const ask = (domain: string, headers: Record<string, string> = {}) => fetch(`${base}/api/v1/tls/ask?domain=${encodeURIComponent(domain)}`, { headers });

describe("which names get a certificate", () => {
  test("the base domain and an existing, enabled organization's host: 200", async () => {
    for (const domain of ["localhost", "acme.localhost", "ACME.localhost", "acme.localhost."]) {
      const r = await ask(domain);
      expect(`${domain} ${r.status}`).toBe(`${domain} 200`);
      await r.body?.cancel();
    }
  });

  test("any other name: 404 (unknown, disabled, reserved, nested, another domain, an address)", async () => {
    for (const domain of ["nope.localhost", "bolt.localhost", "www.localhost", "api.localhost", "x.acme.localhost", "acme.localhost.evil.test", "acme", "evil.test", "127.0.0.1", "-acme.localhost", "acme.localhost:443"]) {
      const r = await ask(domain);
      expect(`${domain} ${r.status}`).toBe(`${domain} 404`);
      expect(((await r.json()) as { code: string }).code).toBe("not_found");
    }
  });

  test("the name after `suite tenant enable` gets one again", async () => {
    await t.ctx.tenants.setDisabled("bolt", false, { command: "tenant enable" });
    expect((await ask("bolt.localhost")).status).toBe(200);
    await t.ctx.tenants.setDisabled("bolt", true, { command: "tenant disable" });
    expect((await ask("bolt.localhost")).status).toBe(404);
  });
});

describe("who may ask: a process on this machine, directly", () => {
  test("a request that came through the proxy (a forwarding header) is refused, whatever the name", async () => {
    const forwarded: Array<Record<string, string>> = [{ "x-forwarded-for": "203.0.113.9" }, { forwarded: "for=203.0.113.9" }, { "x-real-ip": "203.0.113.9" }];
    for (const headers of forwarded) {
      for (const domain of ["acme.localhost", "nope.localhost"]) {
        const r = await ask(domain, headers);
        expect(r.status).toBe(403);
        expect(((await r.json()) as { code: string }).code).toBe("loopback_only");
      }
    }
  });

  test("a caller on another address is refused: known and unknown names answer alike", async () => {
    expect(t.ctx.tls.callerMayAsk("127.0.0.1", new Headers())).toBe(true);
    expect(t.ctx.tls.callerMayAsk("::1", new Headers())).toBe(true);
    expect(t.ctx.tls.callerMayAsk("::ffff:127.0.0.1", new Headers())).toBe(true);
    for (const peer of ["10.0.0.5", "203.0.113.9", "::ffff:10.0.0.5", "fe80::1", null]) expect(t.ctx.tls.callerMayAsk(peer, new Headers())).toBe(false);
    // In-process (no socket, hence no peer address): 403 for every name.
    for (const domain of ["acme.localhost", "nope.localhost"]) {
      const r = await t.json("GET", `/api/v1/tls/ask?domain=${domain}`);
      expect(r.status).toBe(403);
      expect(r.body.code).toBe("loopback_only");
    }
  });

  test("a missing or oversized domain is a 422", async () => {
    const none = await fetch(`${base}/api/v1/tls/ask`);
    expect(none.status).toBe(422);
    await none.body?.cancel();
    const long = await ask(`${"a".repeat(250)}.localhost`);
    expect(long.status).toBe(422);
    await long.body?.cancel();
  });
});
