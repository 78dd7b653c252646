import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { allAudit } from "../support";
import { testApp } from "../../helpers";
import { PROVIDER_FAILURES } from "../../../src/auth/sign-in-providers/provider-reach";
import { OidcBrowser } from "../../support/oidc-browser";
import { PROVIDERS, addProvider, locationOf, oidcWorld, signInVia, startPath, type OidcWorld } from "../../support/oidc-world";

/**
 * Issue 29: an identity provider cannot make the server call a private, loopback or link-local
 * address (issuer or discovered endpoints), and the audit's reason for a failure is one of a
 * fixed set, never the connection error's text. The addresses refused here are never connected
 * to: the guard refuses them before any socket opens (0.0.0.0 where a slip would connect, which
 * only reaches this machine).
 */

/** A provider stand-in on loopback whose discovery document names the endpoints a test gives it. */
function misdirectingProvider(endpoints: { token_endpoint?: string; jwks_uri?: string; userinfo_endpoint?: string }) {
  let issuer = "";
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      if (url.pathname === "/.well-known/openid-configuration") {
        return Response.json({
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ["code"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["RS256"],
          ...endpoints,
        });
      }
      if (url.pathname === "/authorize") {
        const back = new URL(url.searchParams.get("redirect_uri")!);
        back.searchParams.set("code", "a-code");
        back.searchParams.set("state", url.searchParams.get("state") ?? "");
        return new Response(null, { status: 302, headers: { location: back.href } });
      }
      return new Response("not found", { status: 404 });
    },
  });
  issuer = `http://127.0.0.1:${server.port}`;
  return { issuer, close: () => server.stop(true) };
}

const refusedIssuers = [
  "https://169.254.169.254",
  "https://0xa9fea9fe",
  "https://2852039166",
  "https://[::ffff:169.254.169.254]",
  "https://10.1.2.3",
  "https://012.1.2.3",
  "https://172.16.0.1",
  "https://192.168.1.1",
  "https://100.64.0.1",
  "https://0.0.0.0",
  "https://[fd00::1]",
  "https://[fe80::1]",
  "https://224.0.0.1",
];

describe("with the test switch on (the tests' provider runs on loopback)", () => {
  let w: OidcWorld;
  beforeAll(async () => {
    w = await oidcWorld({ SUITE_OIDC_ENDPOINT_HOSTS: "0.0.0.0" });
  });
  afterAll(() => w.close());

  const lastFailure = async () => JSON.parse((await allAudit(w.t)).filter((a) => a.action === "oauth.failure").at(-1)!.detail as string) as { code: string; reason: string };

  test("the real provider on loopback still signs people in (the control)", async () => {
    w.op.accounts.set("control", { email: "control@example.com", email_verified: true });
    const r = await signInVia(w.browser(), "acme", w.providerA.id, "control");
    expect(r.status).toBe(302);
    expect(locationOf(r)).toBe("/");
  });

  test("registering or moving a provider onto a private, link-local or reserved address: 422 refused_address", async () => {
    for (const issuer of refusedIssuers) {
      const r = await w.t.json("POST", PROVIDERS, { token: w.acme.access_token, body: { kind: "oidc", name: `Bad ${issuer}`, issuer, client_id: "c", client_secret: "s" } });
      expect(`${issuer} ${r.status}`).toBe(`${issuer} 422`);
      expect(r.body.detail[0].loc).toEqual(["body", "issuer"]);
      expect(r.body.detail[0].msg).toContain("refused_address");
    }
    const moved = await w.t.json("PATCH", `${PROVIDERS}/${w.providerA.id}`, { token: w.acme.access_token, body: { issuer: "https://169.254.169.254" } });
    expect(moved.status).toBe(422);
    expect(moved.body.detail[0].msg).toContain("refused_address");
  });

  test("a discovered token, JWKS or userinfo endpoint on another host than the issuer's: refused before any request (foreign_endpoint)", async () => {
    for (const endpoints of [{ token_endpoint: "http://169.254.169.254/token" }, { jwks_uri: "http://10.0.0.1/jwks" }, { userinfo_endpoint: "https://internal.example/userinfo" }]) {
      const op = misdirectingProvider(endpoints);
      try {
        const p = await addProvider(w.t, w.acme.access_token, { issuer: op.issuer, client_id: "c", client_secret: "a-secret" });
        const r = await new OidcBrowser(w.t).app("GET", startPath(p.id), "acme");
        expect(r.status).toBe(302);
        expect(locationOf(r)).toBe("/sign-in?error=oauth_provider_error");
        expect(await lastFailure()).toMatchObject({ code: "oauth_provider_error", reason: "foreign_endpoint" });
      } finally {
        op.close();
      }
    }
  });

  test("an endpoint the operator listed, but on a refused address: the token request is refused (refused_address)", async () => {
    const op = misdirectingProvider({ token_endpoint: "https://0.0.0.0:9/token" });
    try {
      const p = await addProvider(w.t, w.acme.access_token, { issuer: op.issuer, client_id: "c", client_secret: "a-secret" });
      const browser = new OidcBrowser(w.t);
      const start = await browser.app("GET", startPath(p.id), "acme");
      expect(start.status).toBe(302);
      const callback = await browser.authorize(locationOf(start)!, "nobody@example.com");
      const r = await browser.app("GET", OidcBrowser.pathOf(callback), "acme");
      expect(locationOf(r)).toBe("/sign-in?error=oauth_provider_error");
      expect(await lastFailure()).toMatchObject({ code: "oauth_provider_error", reason: "refused_address" });
    } finally {
      op.close();
    }
  });

  test("a provider that cannot be reached is `unreachable`, never the connection error's text", async () => {
    // Loopback port 9: nothing listens there. The reason must not tell a closed port from anything else.
    const p = await addProvider(w.t, w.acme.access_token, { issuer: "http://127.0.0.1:9", client_id: "c", client_secret: "a-secret" });
    const r = await new OidcBrowser(w.t).app("GET", startPath(p.id), "acme");
    expect(locationOf(r)).toBe("/sign-in?error=oauth_provider_error");
    expect(await lastFailure()).toMatchObject({ reason: "unreachable" });
    const fixed = new Set<string>([...PROVIDER_FAILURES, "unknown or spent state", "browser mismatch", "malformed state"]);
    const reasons = (await allAudit(w.t)).filter((a) => a.action === "oauth.failure").map((a) => JSON.parse(a.detail as string).reason as string);
    expect(reasons.length).toBeGreaterThan(3);
    expect(reasons.filter((x) => !fixed.has(x))).toEqual([]);
  });
});

describe("without the test switch (production)", () => {
  const t = testApp();
  afterAll(() => t.close());

  test("loopback issuers, in any spelling or by name, are refused; an outside name is accepted", async () => {
    const org = await t.signup("acme");
    for (const issuer of ["https://127.0.0.1:8443", "https://2130706433", "https://0x7f.1", "https://[::1]", "https://localhost", "https://0.0.0.0", ...refusedIssuers.slice(0, 3)]) {
      const r = await t.json("POST", PROVIDERS, { token: org.access_token, body: { kind: "oidc", name: `Loop ${issuer}`, issuer, client_id: "c", client_secret: "s" } });
      expect(`${issuer} ${r.status}`).toBe(`${issuer} 422`);
      expect(r.body.detail[0].msg).toContain("refused_address");
    }
    const ok = await t.json("POST", PROVIDERS, { token: org.access_token, body: { kind: "oidc", name: "Outside", issuer: "https://login.example.com", client_id: "c", client_secret: "s" } });
    expect(ok.status).toBe(201);
  });
});

describe("SUITE_OUTBOUND_ALLOW lets the operator reach an inside provider", () => {
  const t = testApp({ env: { SUITE_OUTBOUND_ALLOW: "10.20.0.0/16, 169.254.169.254" } });
  afterAll(() => t.close());

  test("an allowed range registers; a neighbour outside it does not", async () => {
    const org = await t.signup("acme");
    const add = (issuer: string) => t.json("POST", PROVIDERS, { token: org.access_token, body: { kind: "oidc", name: `In ${issuer}`, issuer, client_id: "c", client_secret: "s" } });
    expect((await add("https://10.20.3.4")).status).toBe(201);
    expect((await add("https://169.254.169.254")).status).toBe(201);
    expect((await add("https://10.21.0.1")).status).toBe(422);
    expect((await add("https://169.254.169.253")).status).toBe(422);
  });
});

describe("DNS rebinding: the name is checked at every use, and the checked address is the one used", () => {
  // A resolver of the test's own: the issuer's name first answers a public address, then a private one.
  const answers: Record<string, string[]> = { "idp.rebind.test": ["93.184.216.34"] };
  const t = testApp({ outbound: { resolve: async (host) => answers[host] ?? Promise.reject(Object.assign(new Error("no"), { code: "ENOTFOUND" })) } });
  afterAll(() => t.close());

  test("registered while public, used once it resolves to a private address: refused_address, nothing sent", async () => {
    const org = await t.signup("acme");
    const p = await addProvider(t, org.access_token, { issuer: "https://idp.rebind.test", client_id: "c", client_secret: "a-secret" });
    answers["idp.rebind.test"] = ["10.0.0.9"];
    const r = await new OidcBrowser(t).app("GET", startPath(p.id), "acme");
    expect(locationOf(r)).toBe("/sign-in?error=oauth_provider_error");
    const failure = (await allAudit(t)).filter((a) => a.action === "oauth.failure").at(-1)!;
    expect(JSON.parse(failure.detail as string)).toMatchObject({ code: "oauth_provider_error", reason: "refused_address" });
  });
});

