import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { type TestApp, testApp } from "../../helpers";
import { addMember, allAudit, clockedApp } from "../support";
import { ACCEPTED, MAGIC_LINK, askLink, countRows, newestToken, outboxLinks, tokenOf } from "./support";
import { testSql } from "../../support/sql";
import { mailSeam } from "../../support/backend";

const apps: TestApp[] = [];
afterAll(() => {
  for (const a of apps) a.close();
});
const track = <T extends { t: TestApp }>(x: T) => (apps.push(x.t), x);

describe("POST /auth/magic-link", () => {
  test("known and unknown addresses get the same 202 and body; only the known one gets a link", async () => {
    const { t } = track({ t: testApp() });
    const org = await t.signup("acme");

    const known = await askLink(t, org.email, { tenant: "acme" });
    const unknown = await askLink(t, "nobody@acme.test", { tenant: "acme" });
    for (const r of [known, unknown]) {
      expect(r.status).toBe(202);
      expect(r.body).toEqual(ACCEPTED);
    }
    expect([...known.headers.keys()].sort()).toEqual([...unknown.headers.keys()].sort());

    const rows = (await t.ctx.repos.mail.list()).filter((r) => r.kind === "magic_link");
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: "magic_link", recipient: org.email, status: "pending", subject: "Your sign-in link for Org acme" });
    expect(rows[0]!.link!.startsWith("http://acme.localhost:8000/magic-link#token=")).toBe(true);
    expect(rows[0]!.text_body).toContain(rows[0]!.link!);
    expect(rows[0]!.html_body).toContain(`href="${rows[0]!.link!}"`);

    // Only the token's SHA-256 is stored; the token names its organization, then 256 random bits.
    const token = tokenOf(rows[0]!.link!);
    expect(token).toMatch(new RegExp(`^${org.tenant.id}\\.[A-Za-z0-9_-]{43}$`));
    const link = (await testSql(t.ctx).get("SELECT * FROM magic_links")) as Record<string, unknown>;
    expect(link.token_hash).toBe(createHash("sha256").update(token).digest("hex"));
    expect(link).toMatchObject({ tenant_id: org.tenant.id, user_id: org.user.id, used_at: null });
    expect((link.expires_at as number) - (link.created_at as number)).toBe(600_000);

    const requested = (await allAudit(t)).filter((a) => a.action === "magic_link.requested");
    expect(requested).toHaveLength(1);
    expect(requested[0]).toMatchObject({ tenant_id: org.tenant.id, user_id: org.user.id });
    expect(String(requested[0]!.detail)).not.toContain(token);
  });

  test("addresses are trimmed and lower-cased; 422 shapes for a missing or malformed email", async () => {
    const { t } = track({ t: testApp() });
    const org = await t.signup("acme");
    expect((await askLink(t, `  ${org.email.toUpperCase()} `, { tenant: "acme" })).status).toBe(202);
    expect(await outboxLinks(t)).toHaveLength(1);

    const missing = await t.json("POST", MAGIC_LINK, { body: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toHaveLength(1);
    expect(missing.body.detail[0]).toMatchObject({ loc: ["body", "email"], type: "missing" });
    const bad = await t.json("POST", MAGIC_LINK, { body: { email: "not-an-address" } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ loc: ["body", "email"], type: "value_error" });
    const wrongType = await t.json("POST", MAGIC_LINK, { body: { email: 42 } });
    expect(wrongType.body.detail[0]).toMatchObject({ loc: ["body", "email"], type: "string_type" });
  });

  test("3 per address per 15 minutes, known or not, then 429 with Retry-After", async () => {
    const { t, clock } = track(clockedApp());
    const org = await t.signup("acme");
    for (const email of [org.email, "ghost@nowhere.test"]) {
      for (let i = 0; i < 3; i++) expect((await askLink(t, email, { tenant: "acme" })).status).toBe(202);
      const limited = await askLink(t, email, { tenant: "acme" });
      expect(limited.status).toBe(429);
      expect(limited.body.code).toBe("rate_limited");
      expect(limited.headers.get("retry-after")).toBe("900");
    }
    // Counted per address (case-blind), across workspaces and without one.
    expect((await askLink(t, org.email.toUpperCase())).status).toBe(429);
    expect(await outboxLinks(t)).toHaveLength(3);
    expect((await askLink(t, "someone-else@acme.test", { tenant: "acme" })).status).toBe(202);

    clock.advance(15 * 60_000);
    expect((await askLink(t, org.email, { tenant: "acme" })).status).toBe(202);
    expect(await outboxLinks(t)).toHaveLength(4);
  });

  test("a per-IP limit stops one client from mailing many addresses", async () => {
    const { t } = track({ t: testApp({ limits: { magicLinkPerIp: { name: "magic-link-ip", max: 2, windowMs: 60_000 } } }) });
    expect((await askLink(t, "a@x.test")).status).toBe(202);
    expect((await askLink(t, "b@x.test")).status).toBe(202);
    const r = await askLink(t, "c@x.test");
    expect(r.status).toBe(429);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  test("without a tenant, one link per workspace the address belongs to; never tenant_required", async () => {
    const { t } = track({ t: testApp() });
    const acme = await t.signup("acme");
    const beta = await t.signup("beta");
    await addMember(t, beta.tenant.id, acme.email, "another long password");

    const r = await askLink(t, acme.email);
    expect(r.status).toBe(202);
    expect(r.body).toEqual(ACCEPTED);
    const hosts = (await outboxLinks(t)).map((l) => new URL(l).hostname).sort();
    expect(hosts).toEqual(["acme.localhost", "beta.localhost"]);

    // With a tenant named, only that workspace's link. (Rows written in one millisecond have no
    // order among themselves, so the new link is found as the one not seen before.)
    const before = new Set(await outboxLinks(t));
    await askLink(t, acme.email, { headers: { "x-tenant": "beta" } });
    const added = (await outboxLinks(t)).filter((l) => !before.has(l));
    expect(added.map((l) => new URL(l).hostname)).toEqual(["beta.localhost"]);
    expect(await outboxLinks(t)).toHaveLength(3);
  });

  test("the link row and its mail are written in one transaction: no mail, no link", async () => {
    const { t } = track({ t: testApp() });
    const org = await t.signup("acme");
    const real = mailSeam(t.ctx).enqueueInTx;
    mailSeam(t.ctx).enqueueInTx = () => {
      throw new Error("disk full");
    };
    try {
      const r = await askLink(t, org.email, { tenant: "acme" });
      expect(r.status).toBe(202);
    } finally {
      mailSeam(t.ctx).enqueueInTx = real;
    }
    expect(await countRows(t, "magic_links")).toBe(0);
    expect(await countRows(t, "mail_outbox WHERE kind = 'magic_link'")).toBe(0);
    expect((await allAudit(t)).filter((a) => a.action === "magic_link.requested")).toHaveLength(0);
    expect(t.logs.some((l) => l.msg === "magic link not issued" && l.level === "error")).toBe(true);

    // The next request works and writes both.
    await askLink(t, org.email, { tenant: "acme" });
    expect(await countRows(t, "magic_links")).toBe(1);
    expect(await countRows(t, "mail_outbox WHERE kind = 'magic_link'")).toBe(1);
    expect(await newestToken(t)).toBeString();
  });

  test("an unknown workspace in Host is 404 tenant_not_found, whatever the address", async () => {
    const { t } = track({ t: testApp() });
    const r = await t.json("POST", MAGIC_LINK, { body: { email: "a@x.test" }, tenant: "nope" });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe("tenant_not_found");
  });
});
