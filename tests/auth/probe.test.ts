import { test, expect } from "bun:test";
import { testApp, setCookies } from "../helpers";
test("probe", async () => {
  const t = testApp();
  const o = await t.signup("acme");
  for (const email of [o.email.toUpperCase(), `  ${o.email}  `, ` ${o.email.toUpperCase()}`]) {
    const r = await t.json("POST", "/api/v1/auth/login", { body: { email, password: o.password } });
    console.log(JSON.stringify(email), r.status, JSON.stringify(r.body).slice(0, 200));
    console.log(r.res.headers.getSetCookie());
  }
  const r2 = await t.json("GET", "/api/v1/auth/me", { headers: { authorization: "Basic x" } });
  console.log(r2.status, r2.body, [...r2.headers]);
  const r3 = await t.json("POST", "/api/v1/auth/logout-all", { token: o.access_token });
  console.log(r3.status, r3.body, r3.res.headers.getSetCookie());
  const a = await t.ctx.repos.security.auditForTenant(o.tenant.id);
  console.log(a);
});
