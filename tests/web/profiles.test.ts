import { afterAll, expect, test } from "bun:test";
import { testApp } from "../helpers";

// GET /api/v1/users/profiles: the invite form's choice of profile (added for the web app).
const t = testApp();
afterAll(() => t.close());

test("admins list their own organization's profiles, none without credentials", async () => {
  const org = await t.signup();
  const r = await t.json("GET", "/api/v1/users/profiles", { token: org.access_token });
  expect(r.status).toBe(200);
  expect(r.body.map((p: { name: string }) => p.name).sort()).toEqual(["Administrator", "Standard user"]);
  expect(r.body.find((p: { name: string }) => p.name === "Administrator").is_admin).toBe(true);
  expect(r.body.map((p: { id: string }) => p.id)).toContain(org.user.profile_id);

  const other = await t.signup();
  const theirs = await t.json("GET", "/api/v1/users/profiles", { token: other.access_token });
  expect(theirs.body.map((p: { id: string }) => p.id)).not.toContain(org.user.profile_id);
  expect((await t.json("GET", "/api/v1/users/profiles")).status).toBe(401);
});
