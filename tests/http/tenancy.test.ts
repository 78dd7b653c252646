import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestApp, testApp } from "../helpers";
import { expectError } from "./support";

const LOGIN = "/api/v1/auth/login";
const ME = "/api/v1/auth/me";
const SHARED = "shared@people.test";
const PW = "correct horse battery";

let t: TestApp;
let acme: Awaited<ReturnType<TestApp["signup"]>>;
let beta: Awaited<ReturnType<TestApp["signup"]>>;
let gamma: Awaited<ReturnType<TestApp["signup"]>>;
let delta: Awaited<ReturnType<TestApp["signup"]>>;

beforeAll(async () => {
  t = testApp();
  acme = await t.signup("acme");
  beta = await t.signup("beta");
  // One person, two workspaces.
  gamma = await t.signup("gamma", { email: SHARED });
  delta = await t.signup("delta", { email: SHARED });
});
afterAll(() => t.close());

/** The tenant a bearer token signs in to, as /me tells it. */
async function tenantOf(token: string): Promise<string> {
  const me = await t.json("GET", ME, { token });
  expect(me.status).toBe(200);
  return me.body.tenant.subdomain;
}

describe("naming the tenant", () => {
  test("Host acme.localhost names acme (any case, any port)", async () => {
    for (const host of ["gamma.localhost", "GAMMA.LocalHost", "gamma.localhost:8000"]) {
      const r = await t.json("POST", LOGIN, { body: { email: SHARED, password: PW }, headers: { host } });
      expect(r.status).toBe(200);
      expect(await tenantOf(r.body.access_token)).toBe("gamma");
    }
  });

  test("the X-Tenant header names the tenant (API clients)", async () => {
    for (const name of ["delta", " Delta "]) {
      const r = await t.json("POST", LOGIN, { body: { email: SHARED, password: PW }, headers: { "x-tenant": name } });
      expect(r.status).toBe(200);
      expect(await tenantOf(r.body.access_token)).toBe("delta");
    }
  });

  test("Host and X-Tenant naming the same tenant agree", async () => {
    const r = await t.json("POST", LOGIN, { body: { email: SHARED, password: PW }, tenant: "gamma", headers: { "x-tenant": "gamma" } });
    expect(r.status).toBe(200);
    const me = await t.json("GET", ME, { token: r.body.access_token, tenant: "gamma", headers: { "x-tenant": "gamma" } });
    expect(me.status).toBe(200);
    expect(me.body.tenant.id).toBe(gamma.tenant.id);
  });

  test("a token works on its own tenant's Host and X-Tenant", async () => {
    expect((await t.json("GET", ME, { token: acme.access_token, tenant: "acme" })).status).toBe(200);
    expect((await t.json("GET", ME, { token: acme.access_token, headers: { "x-tenant": "acme" } })).status).toBe(200);
    expect((await t.json("GET", ME, { token: acme.access_token })).status).toBe(200);
  });

  test("www.localhost (and the bare base domain) name no tenant", async () => {
    for (const host of ["www.localhost", "localhost", "localhost:8000", "api.localhost"]) {
      // The email alone decides when it is in one tenant ...
      const one = await t.json("POST", LOGIN, { body: { email: acme.email, password: PW }, headers: { host } });
      expect(one.status).toBe(200);
      expect(await tenantOf(one.body.access_token)).toBe("acme");
      // ... and a token of any tenant is welcome there.
      const me = await t.json("GET", ME, { token: beta.access_token, headers: { host } });
      expect(me.status).toBe(200);
      expect(me.body.tenant.subdomain).toBe("beta");
    }
    // With an email in two tenants, www.localhost leaves the choice open.
    const two = await t.json("POST", LOGIN, { body: { email: SHARED, password: PW }, tenant: "www" });
    expectError(two, 400, "tenant_required");
  });
});

describe("403 tenant_mismatch", () => {
  test("a token of tenant A on tenant B's Host", async () => {
    const r = await t.json("GET", ME, { token: acme.access_token, tenant: "beta" });
    expect(r.body).toEqual({ detail: "These credentials belong to another organization.", code: "tenant_mismatch" });
    expectError(r, 403, "tenant_mismatch");
  });

  test("a token of tenant A with X-Tenant: B", async () => {
    expectError(await t.json("GET", ME, { token: acme.access_token, headers: { "x-tenant": "beta" } }), 403, "tenant_mismatch");
    expectError(await t.json("GET", "/api/v1/auth/sessions", { token: beta.access_token, headers: { "x-tenant": "acme" } }), 403, "tenant_mismatch");
  });

  test("a token of tenant A on a subdomain that no tenant has", async () => {
    expectError(await t.json("GET", ME, { token: acme.access_token, tenant: "ghost" }), 403, "tenant_mismatch");
  });

  test("a refresh token of tenant A on tenant B's Host", async () => {
    const r = await t.json("POST", "/api/v1/auth/refresh", { body: { refresh_token: beta.refresh_token }, tenant: "acme" });
    expectError(r, 403, "tenant_mismatch");
  });

  test("Host and X-Tenant naming different tenants, with or without a token", async () => {
    expectError(await t.json("GET", ME, { token: acme.access_token, tenant: "acme", headers: { "x-tenant": "beta" } }), 403, "tenant_mismatch");
    expectError(await t.json("GET", ME, { token: acme.access_token, tenant: "beta", headers: { "x-tenant": "acme" } }), 403, "tenant_mismatch");
    const login = await t.json("POST", LOGIN, { body: { email: SHARED, password: PW }, tenant: "gamma", headers: { "x-tenant": "delta" } });
    expectError(login, 403, "tenant_mismatch");
    expect(login.headers.getSetCookie()).toEqual([]);
  });

  test("nothing of tenant A's is reachable through tenant B's host", async () => {
    const r = await t.json("GET", "/api/v1/auth/sessions", { token: acme.access_token, tenant: "beta" });
    expect(r.status).toBe(403);
    expect(JSON.stringify(r.body)).not.toContain(acme.tenant.id);
    expect(JSON.stringify(r.body)).not.toContain(acme.user.id);
  });
});

describe("login and the tenant", () => {
  test("without a tenant, an email that exists in exactly one tenant signs in there", async () => {
    const r = await t.json("POST", LOGIN, { body: { email: beta.email, password: PW } });
    expect(r.status).toBe(200);
    expect(await tenantOf(r.body.access_token)).toBe("beta");
  });

  test("without a tenant, an email in two tenants is 400 tenant_required", async () => {
    const r = await t.json("POST", LOGIN, { body: { email: SHARED, password: PW } });
    expect(r.body).toEqual({
      detail: "This email belongs to several organizations: name one with the X-Tenant header or its subdomain.",
      code: "tenant_required",
    });
    expectError(r, 400, "tenant_required");
    expect(r.headers.getSetCookie()).toEqual([]);
    // The same email typed in another case is the same email.
    expectError(await t.json("POST", LOGIN, { body: { email: " Shared@People.TEST ", password: PW } }), 400, "tenant_required");
  });

  test("naming an unknown subdomain is 404 tenant_not_found, by Host or by X-Tenant", async () => {
    const byHost = await t.json("POST", LOGIN, { body: { email: acme.email, password: PW }, tenant: "nosuch" });
    expect(byHost.body).toEqual({ detail: "No organization has this subdomain.", code: "tenant_not_found" });
    expectError(byHost, 404, "tenant_not_found");
    expectError(await t.json("POST", LOGIN, { body: { email: acme.email, password: PW }, headers: { "x-tenant": "nosuch" } }), 404, "tenant_not_found");
  });

  test("the right password on the wrong tenant is an ordinary failed login", async () => {
    const r = await t.json("POST", LOGIN, { body: { email: acme.email, password: PW }, tenant: "beta" });
    expectError(r, 401, "invalid_credentials");
  });

  test("the shared email signs in to each tenant as a different user", async () => {
    const inGamma = await t.json("POST", LOGIN, { body: { email: SHARED, password: PW }, tenant: "gamma" });
    const inDelta = await t.json("POST", LOGIN, { body: { email: SHARED, password: PW }, tenant: "delta" });
    const meGamma = await t.json("GET", ME, { token: inGamma.body.access_token, tenant: "gamma" });
    const meDelta = await t.json("GET", ME, { token: inDelta.body.access_token, tenant: "delta" });
    expect(meGamma.body.user.id).toBe(gamma.user.id);
    expect(meDelta.body.user.id).toBe(delta.user.id);
    expect(meGamma.body.user.id).not.toBe(meDelta.body.user.id);
    expectError(await t.json("GET", ME, { token: inGamma.body.access_token, tenant: "delta" }), 403, "tenant_mismatch");
  });
});
