import { afterAll, expect, test } from "bun:test";
import { testApp } from "./helpers";

const t = testApp();
afterAll(() => t.close());

test("signup, login by tenant header, and me", async () => {
  const org = await t.signup("acme");
  const login = await t.json("POST", "/api/v1/auth/login", { body: { email: org.email, password: org.password }, headers: { "x-tenant": "acme" } });
  expect(login.status).toBe(200);
  expect(login.body.token_type).toBe("bearer");
  const me = await t.json("GET", "/api/v1/auth/me", { token: login.body.access_token, tenant: "acme" });
  expect(me.status).toBe(200);
  expect(me.body.user.email).toBe(org.email);
  expect(t.logs.some((l) => l.msg === "request" && l.path === "/api/v1/auth/me" && l.status === 200)).toBe(true);
});
