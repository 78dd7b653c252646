import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestApp, browserHeaders, setCookies, testApp } from "../helpers";
import { JSON_TYPE, cookieLogin, expectError } from "./support";

const REVOKE_OTHERS = "/api/v1/auth/sessions/revoke-others";
const SESSIONS = "/api/v1/auth/sessions";
const REFRESH = "/api/v1/auth/refresh";
const ORIGIN = "http://acme.localhost:8000";

let t: TestApp;
let org: Awaited<ReturnType<TestApp["signup"]>>;
let session: string;

beforeAll(async () => {
  t = testApp();
  org = await t.signup("acme");
  ({ session } = await cookieLogin(t, org.email, org.password, "acme"));
});
afterAll(() => t.close());

/** A cookie-authenticated request to acme.localhost with exactly these extra headers. */
const withCookie = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
  t.json(method, path, { cookies: { svc_session: session }, tenant: "acme", headers, body });

const liveSessions = async () => (await withCookie("GET", SESSIONS, {})).body.length as number;

const refused: Array<[string, Record<string, string>]> = [
  ["no content type", { origin: ORIGIN }],
  ["a text/plain content type (a simple cross-site form)", { "content-type": "text/plain", origin: ORIGIN }],
  ["a form content type", { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN }],
  ["a multipart content type", { "content-type": "multipart/form-data; boundary=x", origin: ORIGIN }],
  ["Sec-Fetch-Site: cross-site", { ...JSON_TYPE, origin: ORIGIN, "sec-fetch-site": "cross-site" }],
  ["no Origin and no Referer", { ...JSON_TYPE }],
  ["Origin of another domain", { ...JSON_TYPE, origin: "http://evil.example" }],
  ["Origin that merely ends in the base domain's name", { ...JSON_TYPE, origin: "http://evillocalhost" }],
  ["Origin that starts with the base domain", { ...JSON_TYPE, origin: "http://localhost.evil.example" }],
  ["Origin: null (sandboxed frame), even with a good Referer", { ...JSON_TYPE, origin: "null", referer: `${ORIGIN}/settings` }],
  ["a malformed Origin", { ...JSON_TYPE, origin: "not a url" }],
  ["a Referer of another domain", { ...JSON_TYPE, referer: "https://evil.example/acme.localhost/" }],
  ["a foreign Origin even with a good Referer", { ...JSON_TYPE, origin: "http://evil.example", referer: `${ORIGIN}/` }],
  // Neighbours: another organization's subdomain of the same base domain (issue 13, 2f).
  ["Origin of another organization's subdomain", { ...JSON_TYPE, origin: "http://evil.localhost:8000" }],
  ["Origin of another organization's subdomain, https, no port", { ...JSON_TYPE, origin: "https://evil.localhost" }],
  ["Referer of another organization's subdomain", { ...JSON_TYPE, referer: "http://evil.localhost:8000/acme" }],
  ["Origin of a product host that is not the base domain (app.<base>)", { ...JSON_TYPE, origin: "https://app.localhost" }],
  ["Origin of a deeper name under the tenant's host", { ...JSON_TYPE, origin: "http://x.acme.localhost" }],
  ["Origin whose name only starts with the tenant's host", { ...JSON_TYPE, origin: "http://acme.localhost.evil.example" }],
];

describe("cookie-authenticated writes are refused 403 csrf_failed", () => {
  for (const [name, headers] of refused) {
    test(name, async () => {
      const before = await liveSessions();
      const r = await withCookie("POST", REVOKE_OTHERS, headers);
      expect(r.body).toEqual({ detail: "Cross-site request refused.", code: "csrf_failed" });
      expectError(r, 403, "csrf_failed");
      expect(await liveSessions()).toBe(before); // nothing was revoked
    });
  }

  test("before the body is looked at", async () => {
    const r = await withCookie("POST", "/api/v1/auth/sessions/revoke", { ...JSON_TYPE, origin: "http://evil.example" }, { session_id: 42 });
    expectError(r, 403, "csrf_failed");
  });

  test("the refused request changed nothing: other sessions survive", async () => {
    await t.json("POST", "/api/v1/auth/login", { body: { email: org.email, password: org.password }, tenant: "acme" });
    const before = await liveSessions();
    expect(before).toBeGreaterThanOrEqual(2);
    expectError(await withCookie("POST", REVOKE_OTHERS, { ...JSON_TYPE, origin: "http://evil.example" }), 403, "csrf_failed");
    expect(await liveSessions()).toBe(before);
  });
});

describe("cookie-authenticated writes from our own pages are accepted", () => {
  const accepted: Array<[string, Record<string, string>]> = [
    ["JSON + Origin of the tenant's host", { ...JSON_TYPE, origin: ORIGIN }],
    ["JSON + Origin of the base domain", browserHeaders()],
    ["JSON + Origin of the tenant's host, another port and upper case", { ...JSON_TYPE, origin: "https://ACME.localhost:3000" }],
    ["JSON + Origin of the tenant's host with a trailing dot", { ...JSON_TYPE, origin: "http://acme.localhost.:8000" }],
    ["JSON + Origin of the base domain with a trailing dot", { ...JSON_TYPE, origin: "http://localhost." }],
    ["JSON with a charset + Origin", { "content-type": "application/json; charset=utf-8", origin: ORIGIN }],
    ["JSON + only a Referer on the base domain", { ...JSON_TYPE, referer: `${ORIGIN}/settings/security?tab=sessions` }],
    ["JSON + Origin + Sec-Fetch-Site: same-site", { ...JSON_TYPE, origin: ORIGIN, "sec-fetch-site": "same-site" }],
  ];
  for (const [name, headers] of accepted) {
    test(name, async () => {
      const r = await withCookie("POST", REVOKE_OTHERS, headers);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ detail: "Other sessions revoked.", revoked: expect.any(Number) });
    });
  }

  test("and the revocation really happened", async () => {
    await t.json("POST", "/api/v1/auth/login", { body: { email: org.email, password: org.password }, tenant: "acme" });
    const r = await withCookie("POST", REVOKE_OTHERS, { ...JSON_TYPE, origin: ORIGIN });
    expect(r.body.revoked).toBeGreaterThanOrEqual(1);
    const list = await withCookie("GET", SESSIONS, {});
    expect(list.body).toHaveLength(1);
    expect(list.body[0].current).toBe(true);
  });
});

describe("a request naming its organization only by X-Tenant (Host is the base domain)", () => {
  const viaHeader = (origin: string) =>
    t.json("POST", REVOKE_OTHERS, { cookies: { svc_session: session }, headers: { ...JSON_TYPE, "x-tenant": "acme", origin } });

  test("accepts the base domain and that organization's host", async () => {
    expect((await viaHeader("http://localhost:8000")).status).toBe(200);
    expect((await viaHeader("http://acme.localhost:8000")).status).toBe(200);
  });

  test("refuses another organization's host", async () => {
    expectError(await viaHeader("http://evil.localhost:8000"), 403, "csrf_failed");
  });

  test("with no tenant named at all, only the base domain is ours", async () => {
    const none = (origin: string) => t.json("POST", REVOKE_OTHERS, { cookies: { svc_session: session }, headers: { ...JSON_TYPE, origin } });
    expect((await none("http://localhost:8000")).status).toBe(200);
    expectError(await none("http://acme.localhost:8000"), 403, "csrf_failed");
  });
});

describe("a cookie write whose body is not JSON", () => {
  const types = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/html"];
  for (const type of types) {
    test(`${type}: 403 csrf_failed, not 415, even from our own Origin`, async () => {
      const before = await liveSessions();
      const r = await t.json("POST", REVOKE_OTHERS, { cookies: { svc_session: session }, tenant: "acme", raw: "a=b", headers: { "content-type": type, origin: ORIGIN } });
      expectError(r, 403, "csrf_failed");
      expect(await liveSessions()).toBe(before);
    });
  }

  test("the refresh cookie alone counts too", async () => {
    const { refresh } = await cookieLogin(t, org.email, org.password, "acme");
    const r = await t.json("POST", REFRESH, { cookies: { svc_refresh: refresh }, tenant: "acme", raw: "a=b", headers: { "content-type": "text/plain", origin: ORIGIN } });
    expectError(r, 403, "csrf_failed");
    expect(r.headers.getSetCookie()).toEqual([]);
  });

  test("a bearer request with the same body is still 415", async () => {
    const login = await t.json("POST", "/api/v1/auth/login", { body: { email: org.email, password: org.password }, tenant: "acme" });
    const r = await t.json("POST", "/api/v1/auth/sessions/revoke", { token: login.body.access_token, tenant: "acme", raw: "a=b", headers: { "content-type": "text/plain" } });
    expectError(r, 415, "unsupported_media_type");
    // Bearer wins over a cookie sent alongside it.
    const both = await t.json("POST", "/api/v1/auth/sessions/revoke", {
      token: login.body.access_token, cookies: { svc_session: session }, tenant: "acme", raw: "a=b", headers: { "content-type": "text/plain" },
    });
    expectError(both, 415, "unsupported_media_type");
  });

  test("no cookie and no bearer: 415 as before (a public route)", async () => {
    expectError(await t.json("POST", "/api/v1/auth/login", { raw: "a=b", headers: { "content-type": "text/plain" } }), 415, "unsupported_media_type");
  });
});

describe("what CSRF does not apply to", () => {
  test("a GET with the cookie needs no Origin, Referer or content type", async () => {
    const r = await withCookie("GET", SESSIONS, {});
    expect(r.status).toBe(200);
    expect(Array.isArray(r.body)).toBe(true);
    const cross = await withCookie("GET", "/api/v1/auth/me", { "sec-fetch-site": "cross-site", origin: "http://evil.example" });
    expect(cross.status).toBe(200);
  });

  test("bearer requests, whatever their Origin, Sec-Fetch-Site or content type", async () => {
    const login = await t.json("POST", "/api/v1/auth/login", { body: { email: org.email, password: org.password }, tenant: "acme" });
    const token = login.body.access_token;
    const variants: Array<Record<string, string>> = [{}, { origin: "http://evil.example", "sec-fetch-site": "cross-site" }, { "content-type": "text/plain" }];
    for (const headers of variants) {
      const r = await t.json("POST", REVOKE_OTHERS, { token, tenant: "acme", headers });
      expect(r.status).toBe(200);
    }
    // A bearer header wins over the cookie: the cross-site checks do not come back.
    const both = await t.json("POST", REVOKE_OTHERS, { token, cookies: { svc_session: session }, headers: { origin: "http://evil.example" } });
    expect(both.status).toBe(200);
    // That revoked the cookie's session too: later tests get a fresh one.
    ({ session } = await cookieLogin(t, org.email, org.password, "acme"));
  });

  test("a refresh with the token in the body (a cookie cannot put it there)", async () => {
    const login = await t.json("POST", "/api/v1/auth/login", { body: { email: org.email, password: org.password } });
    const r = await t.json("POST", REFRESH, { body: { refresh_token: login.body.refresh_token }, headers: { origin: "http://evil.example" } });
    expect(r.status).toBe(200);
  });
});

describe("cookie refresh (no body, svc_refresh cookie) is subject to the same checks", () => {
  let refresh: string;
  beforeAll(async () => {
    ({ refresh } = await cookieLogin(t, org.email, org.password, "acme"));
  });
  const refreshWith = (headers: Record<string, string>) => t.json("POST", REFRESH, { cookies: { svc_refresh: refresh }, tenant: "acme", headers });

  const cases: Array<[string, Record<string, string>]> = [
    ["no headers at all", {}],
    ["text/plain", { "content-type": "text/plain", origin: ORIGIN }],
    ["Sec-Fetch-Site: cross-site", { ...JSON_TYPE, origin: ORIGIN, "sec-fetch-site": "cross-site" }],
    ["no Origin and no Referer", { ...JSON_TYPE }],
    ["Origin of another domain", { ...JSON_TYPE, origin: "http://evil.example" }],
  ];
  for (const [name, headers] of cases) {
    test(`refused: ${name}`, async () => {
      const r = await refreshWith(headers);
      expectError(r, 403, "csrf_failed");
      expect(r.headers.getSetCookie()).toEqual([]);
    });
  }

  test("accepted with JSON + our Origin, after the refusals (they rotated nothing)", async () => {
    const res = await t.request("POST", REFRESH, { cookies: { svc_refresh: refresh }, tenant: "acme", headers: { ...JSON_TYPE, origin: ORIGIN } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, string>;
    expect(body).toEqual({ access_token: expect.any(String), refresh_token: expect.any(String), token_type: "bearer" });
    const jar = setCookies(res);
    expect(jar.svc_session?.value).toBe(body.access_token);
    expect(jar.svc_refresh?.value).toBe(body.refresh_token);
    expect(body.refresh_token).not.toBe(refresh);
  });

  test("accepted with JSON + only a Referer, and an empty JSON object counts as no body", async () => {
    const { refresh: fresh } = await cookieLogin(t, org.email, org.password, "acme");
    const r = await t.json("POST", REFRESH, { cookies: { svc_refresh: fresh }, tenant: "acme", headers: { referer: `${ORIGIN}/` }, body: {} });
    expect(r.status).toBe(200);
    const refused = await t.json("POST", REFRESH, { cookies: { svc_refresh: r.body.refresh_token }, tenant: "acme", body: {} });
    expectError(refused, 403, "csrf_failed");
  });
});
