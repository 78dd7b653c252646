import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openPostgres } from "../../src/stores/postgres/database";
import { type Group, LOGIN, ME, ON_POSTGRES, type Org, REFRESH, SESSIONS, SKIP_NOTE, denial, eventually, signup, threeInstances } from "./support";

/**
 * The refresh rules (docs/interface.md#sessions) with the requests of one session spread over three instances:
 * rotation, the two-tab grace window (here 20 s, so that a slow machine's requests still land
 * inside it), and reuse detection after it (the test waits, by polling the clock, until the window
 * is over). The session's state is in the database, so which instance answers does not matter.
 */
const GRACE_S = 20;

describe.skipIf(!ON_POSTGRES)(`refresh rotation, grace and reuse across three instances ${SKIP_NOTE}`, () => {
  let g: Group;
  let org: Org;
  const revoked = { status: 401, code: "session_revoked" };

  beforeAll(async () => {
    g = await threeInstances("mref", { SUITE_REFRESH_GRACE: String(GRACE_S) });
    org = await signup(g.group, 0, "refresh");
  }, 120_000);
  afterAll(() => g?.close());

  const refreshOn = (i: number, refresh_token: string) => g.group.call(i, "POST", REFRESH, { body: { refresh_token } });
  const meOn = (i: number, token: string) => g.group.call(i, "GET", ME, { token });
  async function signIn(i: number) {
    const r = await g.group.call(i, "POST", LOGIN, { tenant: org.subdomain, body: { email: org.email, password: org.password } });
    expect(r.status).toBe(200);
    return { access: r.body.access_token as string, refresh: r.body.refresh_token as string };
  }
  const sessionCount = async (token: string) => {
    const r = await meOn(0, token).then(() => g.group.call(1, "GET", SESSIONS, { token }));
    expect(r.status).toBe(200);
    return r.body.length as number;
  };

  test(
    "rotate on A, the old token's grace use on B, reuse after the grace on C revokes the session everywhere",
    async () => {
      const s = await signIn(0);
      const bystander = await signIn(1);
      const rotated = await refreshOn(0, s.refresh);
      const rotatedAt = Date.now();
      expect(rotated.status).toBe(200);
      expect(rotated.body.refresh_token).not.toBe(s.refresh);
      // A second tab, through another instance, within the window: the same new refresh token, same session.
      const tab = await refreshOn(1, s.refresh);
      expect(Date.now() - rotatedAt).toBeLessThan(GRACE_S * 1000); // else the machine stalled past the window: the case is not tested
      expect(tab.status).toBe(200);
      expect(tab.body.refresh_token).toBe(rotated.body.refresh_token);
      for (const i of [0, 1, 2]) {
        expect((await meOn(i, rotated.body.access_token)).status).toBe(200);
        expect((await meOn(i, tab.body.access_token)).status).toBe(200);
      }
      // The old token once the window is over, on the third instance: theft. The whole session ends.
      await eventually(() => Date.now() > rotatedAt + GRACE_S * 1000 + 1500, 120_000, 250);
      const replay = await g.group.call(2, "POST", REFRESH, { body: { refresh_token: s.refresh }, headers: { "user-agent": "thief" } });
      expect(denial(replay)).toEqual(revoked);
      const after = await Promise.all([0, 1, 2].flatMap((i) => [meOn(i, rotated.body.access_token), meOn(i, tab.body.access_token)]));
      expect(after.map(denial)).toEqual(Array(6).fill(revoked));
      expect(denial(await refreshOn(0, rotated.body.refresh_token))).toEqual(revoked);
      // The user's other session is untouched, on every instance.
      for (const i of [0, 1, 2]) expect((await meOn(i, bystander.access)).status).toBe(200);
      const pg = openPostgres(g.db.url, { max: 1 });
      try {
        const rows = await pg.all<{ user_agent: string }>`SELECT user_agent FROM audit_log WHERE action = 'session.refresh_reuse'`;
        expect(rows).toEqual([{ user_agent: "thief" }]);
      } finally {
        await pg.close();
      }
    },
    180_000,
  );

  test("a token two generations old, inside the window, on a third instance: reuse, the session ends", async () => {
    const s = await signIn(2);
    const g1 = await refreshOn(0, s.refresh);
    expect(g1.status).toBe(200);
    const g2 = await refreshOn(1, g1.body.refresh_token);
    expect(g2.status).toBe(200);
    expect(denial(await refreshOn(2, s.refresh))).toEqual(revoked);
    const after = await Promise.all([0, 1, 2].map((i) => meOn(i, g2.body.access_token)));
    expect(after.map(denial)).toEqual(Array(3).fill(revoked));
    expect(denial(await refreshOn(0, g2.body.refresh_token))).toEqual(revoked);
  }, 120_000);

  test("the same refresh token sent to all three instances at the same moment: all 200, one new token, one session", async () => {
    for (let round = 0; round < 5; round++) {
      const s = await signIn(round % 3);
      const before = await sessionCount(s.access);
      const rs = await Promise.all([0, 1, 2, 0, 1, 2].map((i) => refreshOn(i, s.refresh)));
      expect(rs.map((r) => r.status)).toEqual(Array(6).fill(200));
      expect(new Set(rs.map((r) => r.body.refresh_token)).size).toBe(1);
      const token = rs[0]!.body.access_token as string;
      expect(await sessionCount(token)).toBe(before);
      for (const i of [0, 1, 2]) expect((await meOn(i, token)).status).toBe(200);
      // The shared new token moves the session on once more, normally.
      const next = await refreshOn(2 - (round % 3), rs[0]!.body.refresh_token);
      expect(next.status).toBe(200);
      expect((await meOn(round % 3, next.body.access_token)).status).toBe(200);
    }
  }, 120_000);
});
