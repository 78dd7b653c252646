import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openPostgres } from "../../src/stores/postgres/database";
import { appCode } from "../auth/two-factor/rfc6238";
import { type Group, LOGIN, ON_POSTGRES, type Org, SKIP_NOTE, signup, threeInstances } from "./support";

/**
 * Rate limits and the 2FA attempt counter live in the database, so three instances share them:
 * requests spread over all three (all at once, as a load balancer would spread an attacker's) are
 * counted together, and once the limit is reached every instance refuses.
 */
describe.skipIf(!ON_POSTGRES)(`limits are shared by all three instances ${SKIP_NOTE}`, () => {
  let g: Group;
  beforeAll(async () => {
    g = await threeInstances("mlim");
  }, 120_000);
  afterAll(() => g?.close());

  /** A code the authenticator app shows for no step in the window around `now`. */
  function wrongCode(secret: string, now: number): string {
    const near = new Set([-2, -1, 0, 1, 2].map((s) => appCode(secret, now, s)));
    for (let n = 0; ; n++) {
      const c = String(n).padStart(6, "0");
      if (!near.has(c)) return c;
    }
  }

  const auditCount = async (action: string) => {
    const pg = openPostgres(g.db.url, { max: 1 });
    try {
      return (await pg.one<{ n: number }>`SELECT count(*)::int AS n FROM audit_log WHERE action = ${action}`)!.n;
    } finally {
      await pg.close();
    }
  };

  test("50 wrong 2FA codes spread over three instances at once: at most 5 are checked, the rest 429", async () => {
    const org: Org = await signup(g.group, 0, "twofa");
    const setup = await g.group.call(1, "POST", "/api/v1/auth/2fa/setup", { token: org.access_token });
    expect(setup.status).toBe(200);
    const secret = setup.body.secret as string;
    const confirm = await g.group.call(2, "POST", "/api/v1/auth/2fa/confirm", { token: org.access_token, body: { code: appCode(secret, Date.now()) } });
    expect(confirm.status).toBe(200);

    const login = await g.group.call(0, "POST", LOGIN, { tenant: org.subdomain, body: { email: org.email, password: org.password } });
    expect(login.status).toBe(200);
    expect(login.body.requires_2fa).toBe(true);
    const temp_token = login.body.temp_token as string;
    const bad = wrongCode(secret, Date.now());
    const answers = await Promise.all(Array.from({ length: 50 }, () => g.group.next("POST", "/api/v1/auth/2fa/verify", { body: { temp_token, code: bad } })));
    // Every instance took its share.
    expect(new Set(answers.map((a) => a.instance)).size).toBe(3);
    const checked = answers.filter((a) => a.status === 401 && a.body.code === "invalid_2fa_code");
    const limited = answers.filter((a) => a.status === 429 && a.body.code === "rate_limited");
    expect(checked.length).toBeGreaterThanOrEqual(1);
    expect(checked.length).toBeLessThanOrEqual(5);
    expect(checked.length + limited.length).toBe(50);
    for (const r of limited) expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // Only the checked ones reached the code: that many failures were audited, whichever instance took them.
    expect(await auditCount("2fa.failure")).toBe(checked.length);
    // The right code now waits for the window on every instance.
    for (let i = 0; i < 3; i++) {
      const right = await g.group.call(i, "POST", "/api/v1/auth/2fa/verify", { body: { temp_token, code: appCode(secret, Date.now()) } });
      expect(right.status).toBe(429);
    }
    console.log(`2FA: 50 wrong codes over 3 instances -> ${checked.length} checked, ${limited.length} refused with 429`);
  }, 120_000);

  test("30 wrong passwords for one account spread over three instances at once: at most 10 (+1 per other instance) are checked, the rest 429", async () => {
    const org: Org = await signup(g.group, 1, "login");
    const body = { email: org.email, password: "not the password at all" };
    const answers = await Promise.all(Array.from({ length: 30 }, () => g.group.next("POST", LOGIN, { tenant: org.subdomain, body })));
    expect(new Set(answers.map((a) => a.instance)).size).toBe(3);
    const checked = answers.filter((a) => a.status === 401);
    const limited = answers.filter((a) => a.status === 429 && a.body.code === "rate_limited");
    expect(checked.length).toBeGreaterThanOrEqual(1);
    // Only a wrong password counts, after its hash, one at a time per address in each process (so a
    // burst of right passwords is never locked out): another instance may check one more each
    // before the count it commits is seen (docs/decisions.md, "Sign-in security").
    expect(checked.length).toBeLessThanOrEqual(10 + 2);
    expect(checked.length + limited.length).toBe(30);
    // Now even the right password is refused, by every instance, until the window ends.
    for (let i = 0; i < 3; i++) {
      const right = await g.group.call(i, "POST", LOGIN, { tenant: org.subdomain, body: { email: org.email, password: org.password } });
      expect(right.status).toBe(429);
      expect(Number(right.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    // Another account of another organization is not held up.
    const other = await signup(g.group, 2, "other");
    const theirs = await g.group.call(0, "POST", LOGIN, { tenant: other.subdomain, body: { email: other.email, password: other.password } });
    expect(theirs.status).toBe(200);
    console.log(`login: 30 wrong passwords over 3 instances -> ${checked.length} checked, ${limited.length} refused with 429`);
  }, 120_000);
});
