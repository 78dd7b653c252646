import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { htmlCsp, htmlHeaders, securityHeaders } from "../../src/http/security-headers";
import { type RequestOptions, type TestApp, testApp } from "../helpers";
import { JSON_TYPE } from "./support";

let t: TestApp;
let token: string;
beforeAll(async () => {
  t = testApp();
  token = (await t.signup("acme")).access_token;
});
afterAll(() => t.close());

/** The headers issue 13 (2g) asks of every answer. */
function expectSecurityHeaders(h: Headers): void {
  expect(h.get("x-content-type-options")).toBe("nosniff");
  expect(h.get("x-frame-options")).toBe("DENY");
  expect(h.get("referrer-policy")).toBe("same-origin");
  expect(h.get("content-security-policy")).toContain("frame-ancestors 'none'");
}

describe("every answer carries the security headers", () => {
  const cases: Array<[string, string, string, RequestOptions | (() => RequestOptions), number]> = [
    ["health", "GET", "/api/v1/health", {}, 200],
    ["a JSON answer behind a token", "GET", "/api/v1/auth/me", () => ({ token }), 200],
    ["the OpenAPI document", "GET", "/api/v1/openapi.json", {}, 200],
    ["a 401", "GET", "/api/v1/auth/me", {}, 401],
    ["a 404 (unknown path)", "GET", "/nowhere", {}, 404],
    ["a 404 (unknown organization)", "POST", "/api/v1/auth/login", { body: { email: "a@b.co", password: "whatever1" }, tenant: "nobody" }, 404],
    ["a 413 from Content-Length", "POST", "/api/v1/auth/login", { raw: "x".repeat(1024 * 1024 + 1), headers: JSON_TYPE }, 413],
    ["a 415", "POST", "/api/v1/auth/login", { raw: "a=b", headers: { "content-type": "text/plain" } }, 415],
    ["a 422 (bad JSON)", "POST", "/api/v1/auth/login", { raw: "{oops", headers: JSON_TYPE }, 422],
    ["a 422 (validation)", "POST", "/api/v1/auth/login", { body: {} }, 422],
    ["a 403 csrf_failed", "POST", "/api/v1/auth/sessions/revoke-others", () => ({ cookies: { svc_session: token }, headers: { ...JSON_TYPE, origin: "http://evil.example" } }), 403],
    ["the docs' script", "GET", "/api/v1/docs/init.js", {}, 200],
    ["Swagger UI's stylesheet", "GET", "/api/v1/docs/swagger-ui.css", {}, 200],
  ];
  for (const [name, method, path, o, status] of cases) {
    test(`${name}: ${method} ${path} → ${status}`, async () => {
      const r = await t.request(method, path, typeof o === "function" ? o() : o);
      expect(r.status).toBe(status);
      expectSecurityHeaders(r.headers);
      // A non-HTML answer may load nothing at all.
      expect(r.headers.get("content-security-policy")).toStartWith("default-src 'none';");
      await r.arrayBuffer();
    });
  }

  test("a 500 carries them too", async () => {
    const broken = testApp();
    broken.ctx.auth.authenticate = async () => {
      throw new Error("boom");
    };
    const login = await broken.signup("boom");
    const r = await broken.request("GET", "/api/v1/auth/me", { token: login.access_token });
    expect(r.status).toBe(500);
    expectSecurityHeaders(r.headers);
    broken.close();
  });
});

describe("the docs page (HTML) has a CSP that Swagger UI runs under", () => {
  let page: Response;
  let html: string;
  beforeAll(async () => {
    page = await t.request("GET", "/api/v1/docs");
    html = await page.text();
  });

  test("the headers, with a page CSP: only this origin's scripts, styles and fetches", () => {
    expect(page.status).toBe(200);
    expectSecurityHeaders(page.headers);
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toBe("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'");
    expect(csp).not.toContain("unsafe");
  });

  test("no inline script or style in the page: everything it runs is a served file", () => {
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBe(2);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/src="\/api\/v1\/docs\/[\w.-]+\.js"/);
      expect(body!.trim()).toBe("");
    }
    expect(html).not.toMatch(/<style|\sstyle=|\son\w+=/i);
  });
});

describe("the helpers another HTML page reuses", () => {
  test("htmlCsp refuses everything it is not told, framing always", () => {
    expect(htmlCsp()).toBe("default-src 'none'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'");
    const csp = htmlCsp({ script: ["'self'"], connect: ["'self'", "https://api.example.com"], form: ["'self'"] });
    expect(csp).toContain("script-src 'self'; ");
    expect(csp).toContain("connect-src 'self' https://api.example.com; ");
    expect(csp).toContain("form-action 'self'; ");
    expect(csp).toContain("frame-ancestors 'none'");
  });

  test("htmlHeaders is the common set with the page's own CSP and an HTML type", () => {
    const h = htmlHeaders({ script: ["'self'"] });
    expect(h["x-content-type-options"]).toBe(securityHeaders["x-content-type-options"]!);
    expect(h["content-type"]).toBe("text/html; charset=utf-8");
    expect(h["content-security-policy"]).toBe(htmlCsp({ script: ["'self'"] }));
  });
});
