import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Group, LOGIN, ME, ON_POSTGRES, type Org, REFRESH, SESSIONS, SKIP_NOTE, denial, signup, threeInstances } from "./support";

/**
 * Sessions are read from the database on every request (no cache): a session revoked through one
 * instance is refused on the very next request by every instance, with no wait and no retry.
 */
describe.skipIf(!ON_POSTGRES)(`a revocation holds at once on all three instances ${SKIP_NOTE}`, () => {
  let g: Group;
  let org: Org;
  const revoked = { status: 401, code: "session_revoked" };

  beforeAll(async () => {
    g = await threeInstances("msess");
    org = await signup(g.group, 0, "revoke");
  }, 120_000);
  afterAll(() => g?.close());

  /** A new session signed in through instance `i`: its tokens and its id (as listed by itself). */
  async function signIn(i: number) {
    const r = await g.group.call(i, "POST", LOGIN, { tenant: org.subdomain, body: { email: org.email, password: org.password } });
    expect(r.status).toBe(200);
    const list = await g.group.call(i, "GET", SESSIONS, { token: r.body.access_token });
    expect(list.status).toBe(200);
    const sid = list.body.find((s: { current: boolean }) => s.current).id as string;
    return { access: r.body.access_token as string, refresh: r.body.refresh_token as string, sid };
  }

  const meOn = (i: number, token: string) => g.group.call(i, "GET", ME, { token });

  test("signed in via A, revoked via B: the token fails on A, B and C on the very next request", async () => {
    for (let round = 0; round < 3; round++) {
      const [a, b, c] = [round % 3, (round + 1) % 3, (round + 2) % 3];
      const victim = await signIn(a);
      const admin = await signIn(b);
      // Each instance has served the victim's token (whatever it might remember, it has seen it alive).
      for (const i of [a, b, c]) expect((await meOn(i, victim.access)).status).toBe(200);
      const r = await g.group.call(b, "POST", `${SESSIONS}/revoke`, { token: admin.access, body: { session_id: victim.sid } });
      expect(r.status).toBe(200);
      expect(r.body.revoked).toBe(1);
      // The very next request, on each instance, all at once: no wait, no retry.
      const after = await Promise.all([a, b, c].map((i) => meOn(i, victim.access)));
      expect(after.map(denial)).toEqual([revoked, revoked, revoked]);
      // Its refresh token is dead everywhere too, and the admin's own session is untouched.
      const refreshed = await g.group.call(c, "POST", REFRESH, { body: { refresh_token: victim.refresh } });
      expect(denial(refreshed)).toEqual(revoked);
      for (const i of [a, b, c]) expect((await meOn(i, admin.access)).status).toBe(200);
    }
  }, 120_000);

  test("revoke-others via A: every other session fails on A, B and C at once; A's own goes on", async () => {
    const keeper = await signIn(0);
    const others = [await signIn(1), await signIn(2), await signIn(0)];
    for (const o of others) for (const i of [0, 1, 2]) expect((await meOn(i, o.access)).status).toBe(200);
    const r = await g.group.call(0, "POST", `${SESSIONS}/revoke-others`, { token: keeper.access });
    expect(r.status).toBe(200);
    const after = await Promise.all(others.flatMap((o) => [0, 1, 2].map((i) => meOn(i, o.access))));
    expect(after.map(denial)).toEqual(Array(9).fill(revoked));
    for (const i of [0, 1, 2]) expect((await meOn(i, keeper.access)).status).toBe(200);
  }, 120_000);

  test("logout-all via C: every session of the user, signed in on any instance, fails everywhere at once", async () => {
    const sessions = [await signIn(0), await signIn(1), await signIn(2)];
    for (const s of sessions) for (const i of [0, 1, 2]) expect((await meOn(i, s.access)).status).toBe(200);
    const r = await g.group.call(2, "POST", "/api/v1/auth/logout-all", { token: sessions[0]!.access });
    expect(r.status).toBe(200);
    const after = await Promise.all(sessions.flatMap((s) => [0, 1, 2].map((i) => meOn(i, s.access))));
    expect(after.map(denial)).toEqual(Array(9).fill(revoked));
    const refreshes = await Promise.all(sessions.map((s, k) => g.group.call(k, "POST", REFRESH, { body: { refresh_token: s.refresh } })));
    expect(refreshes.map(denial)).toEqual(Array(3).fill(revoked));
    // Signing in again works, through any instance.
    const again = await signIn(1);
    for (const i of [0, 1, 2]) expect((await meOn(i, again.access)).status).toBe(200);
  }, 120_000);
});
