/**
 * Mailed tokens name their organization (`<tenant id>.<secret>`, issue 19): every kind of mailed
 * link (magic link, password reset, address verification, invitation) is looked up by (tenant,
 * hash of the whole token), so a sharded database reads one organization's shard. Links mailed
 * before the upgrade (a bare secret) keep working, once; anything malformed gets the contract's
 * error for an unknown token, never a 500.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { hashToken } from "../../src/kernel/ids";
import { type TestApp, testApp } from "../helpers";
import { noteSecret } from "../security/ledger";
import { testSql, unnamedLinksLiveUntil } from "../support/sql";
import { invited } from "../team/support";
import { askLink, newestToken, verifyToken } from "./magic-link/support";
import { RESET, askReset, newestTokenOf } from "./password/support";

const t = testApp();
const acme = await t.signup("acme");
const beta = await t.signup("beta");
// PostgreSQL: as a database upgraded while links without their organization were still live.
await unnamedLinksLiveUntil(t.ctx);
afterAll(() => t.close());

let n = 0;
interface Kind {
  name: string;
  /** The table and the condition that pick its rows. */
  table: string;
  /** A fresh live token, as its mail carries it, and the organization it is for. */
  issue: () => Promise<{ token: string; tenantId: string }>;
  spend: (token: string) => Promise<{ status: number; body: Record<string, unknown> }>;
  ok: number;
  refused: { status: number; code: string };
}

const KINDS: Kind[] = [
  {
    name: "magic link",
    table: "magic_links",
    // A new organization each time: the per-address limits stay out of the way.
    issue: async () => {
      const org = await t.signup();
      await askLink(t, org.email, { tenant: org.subdomain });
      return { token: await newestToken(t), tenantId: org.tenant.id };
    },
    spend: (token) => verifyToken(t, token),
    ok: 200,
    refused: { status: 401, code: "invalid_token" },
  },
  {
    name: "password reset",
    table: "account_tokens",
    issue: async () => {
      const org = await t.signup();
      await askReset(t, org.email, { tenant: org.subdomain });
      return { token: await newestTokenOf(t, "password_reset"), tenantId: org.tenant.id };
    },
    spend: (token) => t.json("POST", RESET, { body: { token, password: `a new passphrase ${++n}` } }),
    ok: 200,
    refused: { status: 400, code: "reset_token_invalid" },
  },
  {
    name: "address verification",
    table: "account_tokens",
    // Signup mails the new owner a verification link.
    issue: async () => {
      const org = await t.signup();
      return { token: await newestTokenOf(t, "email_verification"), tenantId: org.tenant.id };
    },
    spend: (token) => t.json("POST", "/api/v1/auth/email/verify", { body: { token } }),
    ok: 200,
    refused: { status: 400, code: "verification_token_invalid" },
  },
  {
    name: "invitation",
    table: "invitations",
    issue: async () => ({ token: (await invited(t, acme, `joiner${++n}@example.com`)).token, tenantId: acme.tenant.id }),
    spend: (token) => t.json("POST", "/api/v1/auth/invitations/accept", { body: { token, password: "new member password" } }),
    ok: 201,
    refused: { status: 400, code: "invitation_invalid" },
  },
];

/** Makes the row of `token` answer to `other` instead (what a link mailed some other way would hash to). */
async function rehash(kind: Kind, token: string, other: string): Promise<void> {
  noteSecret("test token", other);
  expect(await testSql(t.ctx).run(`UPDATE ${kind.table} SET token_hash = ?1 WHERE token_hash = ?2`, hashToken(other), hashToken(token))).toBe(1);
}

const secretOf = (token: string) => token.slice(token.indexOf(".") + 1);

for (const kind of KINDS) {
  describe(`${kind.name} tokens name their organization`, () => {
    test("mailed as `<tenant id>.<secret>`; works once", async () => {
      const { token, tenantId } = await kind.issue();
      expect(token).toMatch(new RegExp(`^${tenantId}\\.[A-Za-z0-9_-]{43}$`));
      expect((await kind.spend(token)).status).toBe(kind.ok);
      const again = await kind.spend(token);
      expect(again.status).toBe(kind.refused.status);
      expect(again.body.code).toBe(kind.refused.code);
    });

    test("another organization's name on a row's hash opens nothing: the lookup is by (tenant, hash)", async () => {
      const { token, tenantId } = await kind.issue();
      // The row made to hold the hash of `<beta>.<secret>`: beta has no such row, the owner's is not looked at.
      const forged = `${beta.tenant.id}.${secretOf(token)}`;
      await rehash(kind, token, forged);
      const r = await kind.spend(forged);
      expect(r.status).toBe(kind.refused.status);
      expect(r.body.code).toBe(kind.refused.code);
      // Under its own organization's name the same secret opens it (the row was left alone).
      const own = `${tenantId}.${secretOf(token)}`;
      await rehash(kind, forged, own);
      expect((await kind.spend(own)).status).toBe(kind.ok);
    });

    test("a link mailed before tokens named their tenant (a bare secret) still works, once", async () => {
      const { token } = await kind.issue();
      const legacy = secretOf(token);
      await rehash(kind, token, legacy);
      expect((await kind.spend(legacy)).status).toBe(kind.ok);
      const again = await kind.spend(legacy);
      expect(again.status).toBe(kind.refused.status);
      expect(again.body.code).toBe(kind.refused.code);
    });

    test("malformed tokens and unknown organizations get the unknown token's error, never a 500", async () => {
      const { token, tenantId } = await kind.issue();
      const secret = secretOf(token);
      for (const bad of [
        "no-dot-and-not-a-secret",
        `.${secret}`,
        `${tenantId}.`,
        `${tenantId}.short`,
        `bad$tenant.${secret}`,
        `${tenantId}.${secret}.more`,
        `${"a".repeat(65)}.${secret}`,
        `NoSuchOrganization123.${secret}`,
        "x".repeat(43),
      ]) {
        const r = await kind.spend(bad);
        expect([bad, r.status, r.body.code]).toEqual([bad, kind.refused.status, kind.refused.code]);
      }
      // None of that spent the real one.
      expect((await kind.spend(token)).status).toBe(kind.ok);
    });
  });
}
