import { afterAll, expect, test } from "bun:test";
import type { TestApp } from "../helpers";
import { denial, login } from "./support";
import { challenge, enabledOrg, verify } from "./two-factor/support";

const apps: TestApp[] = [];
afterAll(() => {
  for (const a of apps) a.close();
});

// Found by the bad-input fuzz: failed sign-ins answered 401 without the header RFC 9110 §15.5.2
// requires of every 401. Now every 401 names the Bearer scheme.
test("every 401, failed sign-ins included, carries WWW-Authenticate: Bearer", async () => {
  const { t, org } = await enabledOrg(apps);
  expect(denial(await login(t, org.email, "wrong password!"))).toEqual({ status: 401, code: "invalid_credentials", www: "Bearer" });
  expect(denial(await t.json("POST", "/api/v1/auth/magic-verify", { body: { token: "no-such-link-token" } }))).toEqual({ status: 401, code: "invalid_token", www: "Bearer" });
  expect(denial(await verify(t, "not-a-temp-token", "123456"))).toEqual({ status: 401, code: "invalid_temp_token", www: "Bearer" });
  const temp = await challenge(t, org.email, org.password);
  expect(denial(await verify(t, temp, "0000-0000"))).toEqual({ status: 401, code: "invalid_2fa_code", www: "Bearer" });
});
