import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllowList } from "../../src/outbound/addresses";
import { createOutboundGuard, OutboundError, type OutboundSettings } from "../../src/outbound/guard";

/**
 * The guard against real servers on this machine's loopback, reached through names that only
 * the test's resolver knows: a request can only arrive if the guard connected to the address it
 * checked, since the system resolver has never heard of `idp.test`.
 */
const dir = mkdtempSync(join(tmpdir(), "outbound-"));
let cert = "";
let key = "";
let plain: ReturnType<typeof Bun.serve>;
let secure: ReturnType<typeof Bun.serve>;
const seen: Array<{ host: string | null; path: string }> = [];
const lookups: string[] = [];

function answer(req: Request): Response | Promise<Response> {
  const url = new URL(req.url);
  seen.push({ host: req.headers.get("host"), path: url.pathname });
  switch (url.pathname) {
    case "/redirect":
      return new Response(null, { status: 302, headers: { location: "http://169.254.169.254/latest/meta-data/" } });
    case "/big":
      return new Response("x".repeat(64 * 1024));
    case "/slow":
      return new Promise((r) => setTimeout(() => r(new Response("late")), 2000));
    default:
      return Response.json({ ok: true, path: url.pathname });
  }
}

beforeAll(() => {
  // A certificate for idp.test only, from openssl (in the CI image: nginx's check uses it too).
  const made = Bun.spawnSync(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
    "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"), "-subj", "/CN=idp.test", "-addext", "subjectAltName=DNS:idp.test"]);
  expect(made.exitCode).toBe(0);
  cert = readFileSync(join(dir, "cert.pem"), "utf8");
  key = readFileSync(join(dir, "key.pem"), "utf8");
  plain = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: answer });
  secure = Bun.serve({ hostname: "127.0.0.1", port: 0, tls: { cert, key }, fetch: answer });
});
afterAll(() => {
  plain.stop(true);
  secure.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

const names: Record<string, string[]> = { "idp.test": ["127.0.0.1"], "other.test": ["127.0.0.1"], "inside.test": ["10.0.0.7"] };
const guard = (over: Partial<OutboundSettings> = {}) =>
  createOutboundGuard({
    allow: parseAllowList(""),
    loopbackFor: new Set(["identity_provider"]),
    resolve: async (host) => {
      lookups.push(host);
      const a = names[host];
      if (!a) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
      return a;
    },
    ca: cert,
    ...over,
  });
const reasonOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return "answered";
  } catch (e) {
    return e instanceof OutboundError ? e.reason : `unexpected ${String(e)}`;
  }
};
const idp = { purpose: "identity_provider" as const };

describe("guardedFetch", () => {
  test("http: connects to the checked address, one lookup, the Host header the URL's", async () => {
    lookups.length = 0;
    seen.length = 0;
    const r = await guard().guardedFetch(`http://idp.test:${plain.port}/doc`, { headers: { accept: "application/json" } }, idp);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ ok: true, path: "/doc" });
    expect(lookups).toEqual(["idp.test"]);
    expect(seen).toEqual([{ host: `idp.test:${plain.port}`, path: "/doc" }]);
  });

  test("https: the TLS name is the URL's (SNI and the certificate check), not the address's", async () => {
    seen.length = 0;
    const r = await guard().guardedFetch(`https://idp.test:${secure.port}/jwks`, undefined, idp);
    expect(await r.json()).toEqual({ ok: true, path: "/jwks" });
    expect(seen[0]!.host).toBe(`idp.test:${secure.port}`);
    // Another name on the same address: its certificate does not match, so no answer.
    expect(await reasonOf(guard().guardedFetch(`https://other.test:${secure.port}/jwks`, undefined, idp))).toBe("tls");
    // Without trusting the test's authority: the certificate is refused, and the reason says only "tls".
    expect(await reasonOf(guard({ ca: undefined }).guardedFetch(`https://idp.test:${secure.port}/jwks`, undefined, idp))).toBe("tls");
  });

  test("a refused address is never connected to", async () => {
    seen.length = 0;
    expect(await reasonOf(guard({ loopbackFor: new Set() }).guardedFetch(`http://idp.test:${plain.port}/doc`, undefined, idp))).toBe("refused_address");
    expect(await reasonOf(guard({ loopbackFor: new Set() }).guardedFetch(`http://2130706433:${plain.port}/doc`, undefined, idp))).toBe("refused_address");
    expect(await reasonOf(guard().guardedFetch(`http://127.0.0.1:${plain.port}/doc`, undefined, { purpose: "webhook" }))).toBe("refused_address");
    expect(await reasonOf(guard().guardedFetch("http://inside.test/doc", undefined, idp))).toBe("refused_address");
    expect(seen).toEqual([]);
  });

  test("redirects are not followed; bodies are capped; slow answers time out; closed ports are unreachable", async () => {
    seen.length = 0;
    expect(await reasonOf(guard().guardedFetch(`http://idp.test:${plain.port}/redirect`, undefined, idp))).toBe("redirect");
    expect(seen.map((s) => s.path)).toEqual(["/redirect"]);
    expect(await reasonOf(guard().guardedFetch(`http://idp.test:${plain.port}/big`, undefined, { ...idp, maxBytes: 1024 }))).toBe("too_large");
    expect((await (await guard().guardedFetch(`http://idp.test:${plain.port}/big`, undefined, idp)).text()).length).toBe(64 * 1024);
    expect(await reasonOf(guard().guardedFetch(`http://idp.test:${plain.port}/slow`, undefined, { ...idp, timeoutMs: 200 }))).toBe("timeout");
    // Port 9 (discard) on loopback: nothing listens in the test machine.
    expect(await reasonOf(guard().guardedFetch("http://idp.test:9/", undefined, idp))).toBe("unreachable");
    expect(await reasonOf(guard().guardedFetch("http://nowhere.test/", undefined, idp))).toBe("unreachable");
  });
});
