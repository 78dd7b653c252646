import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { requestInfo } from "../../src/http/client";
import { hostName, requestedSubdomain } from "../../src/http/tenancy";
import { type TestApp, testApp } from "../helpers";
import { JSON_TYPE, expectError } from "./support";

/** A stand-in for Bun's server: the socket's address. */
const socket = { requestIP: () => ({ address: "198.51.100.9" }) };
const from = (forwarded: string) => new Request("http://localhost/", { headers: { "x-forwarded-for": forwarded } });

describe("SUITE_TRUST_PROXY: the forwarded address is used only when it is an IP", () => {
  const used: Array<[string, string]> = [
    ["203.0.113.7", "203.0.113.7"],
    ["10.0.0.1, 203.0.113.7", "203.0.113.7"],
    ["10.0.0.1,203.0.113.7 ", "203.0.113.7"],
    ["2001:db8::1", "2001:db8::1"],
    ["junk, ::1", "::1"],
  ];
  for (const [header, ip] of used) {
    test(`X-Forwarded-For: ${JSON.stringify(header)} → ${ip}`, () => {
      expect(requestInfo(from(header), socket, true).ip).toBe(ip);
    });
  }

  const junk = [
    "junk",
    "1.2.3.4, junk",
    "203.0.113.7:443",
    "[2001:db8::1]",
    "[2001:db8::1]:443",
    "300.1.1.1",
    "1.2.3",
    "example.com",
    "unknown",
    "",
    " , ",
    "1.2.3.4 5.6.7.8",
    "' OR 1=1 --",
    "x".repeat(5000),
  ];
  for (const header of junk) {
    test(`X-Forwarded-For: ${JSON.stringify(header.slice(0, 40))} → the socket's address`, () => {
      expect(requestInfo(from(header), socket, true).ip).toBe("198.51.100.9");
    });
  }

  test("without the setting the header is ignored, whatever it says", () => {
    expect(requestInfo(from("203.0.113.7"), socket, false).ip).toBe("198.51.100.9");
  });

  test("no socket address and no usable header: null, never junk", () => {
    expect(requestInfo(from("junk"), null, true).ip).toBeNull();
  });
});

describe("hostName", () => {
  const cases: Array<[string, string]> = [
    ["acme.localhost", "acme.localhost"],
    ["ACME.LocalHost:8000", "acme.localhost"],
    ["acme.localhost.", "acme.localhost"],
    ["acme.localhost.:8000", "acme.localhost"],
    ["localhost.", "localhost"],
    ["[::1]:8000", "::1"],
    ["[::1]", "::1"],
    ["::1", "::1"],
    ["127.0.0.1:8000", "127.0.0.1"],
    ["", ""],
  ];
  for (const [host, name] of cases) test(`${JSON.stringify(host)} → ${JSON.stringify(name)}`, () => expect(hostName(host)).toBe(name));

  test("a trailing dot names the same organization, and the base domain's names none", () => {
    expect(requestedSubdomain({ host: "acme.localhost." }, "localhost")).toBe("acme");
    expect(requestedSubdomain({ host: "acme.localhost.:8000" }, "localhost")).toBe("acme");
    expect(requestedSubdomain({ host: "localhost." }, "localhost")).toBeNull();
    expect(requestedSubdomain({ host: "www.localhost." }, "localhost")).toBeNull();
  });
});

describe("a Host with a trailing dot, through the app", () => {
  let t: TestApp;
  let acme: Awaited<ReturnType<TestApp["signup"]>>;
  beforeAll(async () => {
    t = testApp();
    acme = await t.signup("acme");
    await t.signup("beta");
  });
  afterAll(() => t.close());

  test("signs in to the organization it names", async () => {
    const r = await t.json("POST", "/api/v1/auth/login", { body: { email: acme.email, password: acme.password }, headers: { host: "acme.localhost." } });
    expect(r.status).toBe(200);
    const me = await t.json("GET", "/api/v1/auth/me", { token: r.body.access_token, headers: { host: "acme.localhost.:8000" } });
    expect(me.status).toBe(200);
    expect(me.body.tenant.subdomain).toBe("acme");
  });

  test("another organization's host with a trailing dot is still another organization", async () => {
    const login = await t.json("POST", "/api/v1/auth/login", { body: { email: acme.email, password: acme.password }, tenant: "acme" });
    expectError(await t.json("GET", "/api/v1/auth/me", { token: login.body.access_token, headers: { host: "beta.localhost." } }), 403, "tenant_mismatch");
  });

  test("the base domain with a trailing dot names no organization", async () => {
    const login = await t.json("POST", "/api/v1/auth/login", { body: { email: acme.email, password: acme.password }, headers: { host: "localhost." } });
    expect(login.status).toBe(200);
    const me = await t.json("GET", "/api/v1/auth/me", { token: login.body.access_token, headers: { host: "localhost.", ...JSON_TYPE } });
    expect(me.body.tenant.subdomain).toBe("acme");
  });

  test("an unknown organization with a trailing dot is 404 tenant_not_found", async () => {
    expectError(await t.json("POST", "/api/v1/auth/login", { body: { email: acme.email, password: acme.password }, headers: { host: "nobody.localhost." } }), 404, "tenant_not_found");
  });
});
