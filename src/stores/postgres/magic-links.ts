import type { MagicLinksStore } from "../../auth/magic-link/repo";
import { MAX_WORKSPACES_PER_REQUEST, type MagicLinkRow, type MagicLinkTarget } from "../../auth/magic-link/repo";
import type { OutgoingMail } from "../../mail/repo";
import type { AuditEntry } from "../../security/repo";
import { addressTargets, lockUserInTx } from "./account-tokens";
import { type Pg, type PgTx, inEveryTenant } from "./database";
import type { PgEnqueueInTx } from "./mail";
import type { PgAuditInTx } from "./sessions";
import { unnamedLinksWindow } from "./unnamed-links";

/** Magic links on PostgreSQL: the same functions as the SQLite store. */
export function createPostgresMagicLinksStore(pg: Pg, others: { security: PgAuditInTx; mail: PgEnqueueInTx }) {
  const unnamedLive = unnamedLinksWindow(pg);
  async function insertInTx(tx: PgTx, r: Omit<MagicLinkRow, "used_at">): Promise<void> {
    await tx.run`INSERT INTO magic_links (tenant_id, token_hash, user_id, expires_at, created_at)
      VALUES (${r.tenant_id}, ${r.token_hash}, ${r.user_id}, ${r.expires_at}, ${r.created_at})`;
  }

  const store = {
    insertInTx,
    /**
     * The link, its mail and its audit row in one commit: either all exist or none does.
     * The audit row's detail gets the new mail's id as `mail_id`.
     */
    issue: async (r: Omit<MagicLinkRow, "used_at">, mail: OutgoingMail, audit: AuditEntry, now: number): Promise<void> =>
      pg.begin(async (tx) => {
        await insertInTx(tx, r);
        const mailId = await others.mail.enqueueInTx(tx, mail, now);
        await others.security.auditInTx(tx, { ...audit, detail: { mail_id: mailId, ...audit.detail } }, now);
      }),
    target: async (tenantId: string, email: string): Promise<MagicLinkTarget | null> =>
      pg.one<MagicLinkTarget>`SELECT u.*, t.subdomain, t.name AS tenant_name FROM users u JOIN tenants t ON t.id = u.tenant_id
        WHERE u.tenant_id = ${tenantId} AND u.email = ${email}`,
    /**
     * A request without a tenant: the address alone, across workspaces (oldest membership first).
     * Proven addresses win: unproven accounts count only when the address has no proven one, so a
     * workspace someone else opened with this address receives no link (issue 16).
     */
    targetsAnyTenant: async (email: string): Promise<MagicLinkTarget[]> =>
      // Through the address directory (schema 54): its cost follows the address, not the organizations.
      addressTargets(pg, email, MAX_WORKSPACES_PER_REQUEST),
    /**
     * Live only, by the link's key. A link from before links named their tenant (`tenantId` null):
     * one probe of (tenant_id, token_hash) per organization, only while such a link can still be
     * live (unnamed-links.ts); afterwards none is, and nothing is read.
     */
    live: async (tenantId: string | null, tokenHash: string, now: number): Promise<MagicLinkRow | null> =>
      tenantId !== null
        ? pg.one<MagicLinkRow>`SELECT token_hash, tenant_id, user_id, expires_at, used_at, created_at FROM magic_links
            WHERE tenant_id = ${tenantId} AND token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > ${now}`
        : !(await unnamedLive(now))
          ? null
          : pg
              .unsafe<MagicLinkRow>(`${inEveryTenant("magic_links", "token_hash = $1 AND used_at IS NULL AND expires_at > $2")} LIMIT 1`, [tokenHash, now])
              .then((rows) => rows[0] ?? null),
    /**
     * Marks the link used; answers its user, or null when it was used, expired or unknown. Single
     * use across instances: a second UPDATE waits for the first and then finds used_at set.
     * Signing in with one link retires the user's other links and proves the address.
     */
    consume: async (tokenHash: string, tenantId: string, now: number): Promise<{ tenant_id: string; user_id: string } | null> =>
      pg.begin(async (tx) => {
        // The user row first: two of a user's links used at once queue here, instead of each
        // holding its own link while retiring the other's (a deadlock). The second then finds
        // its link retired.
        const owner = await tx.one<{ user_id: string }>`SELECT user_id FROM magic_links WHERE tenant_id = ${tenantId} AND token_hash = ${tokenHash}`;
        if (!owner) return null;
        await lockUserInTx(tx, tenantId, owner.user_id);
        const row = await tx.one<{ tenant_id: string; user_id: string }>`UPDATE magic_links SET used_at = ${now}
          WHERE tenant_id = ${tenantId} AND token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > ${now}
          RETURNING tenant_id, user_id`;
        if (!row) return null;
        await tx.run`UPDATE magic_links SET used_at = ${now} WHERE tenant_id = ${row.tenant_id} AND user_id = ${row.user_id} AND used_at IS NULL`;
        await tx.run`UPDATE users SET email_verified_at = ${now} WHERE tenant_id = ${row.tenant_id} AND id = ${row.user_id} AND email_verified_at IS NULL`;
        return { tenant_id: row.tenant_id, user_id: row.user_id };
      }),
    /** Deletes links that expired before `before`; answers how many. */
    purgeExpired: async (before: number): Promise<number> => pg.run`DELETE FROM magic_links WHERE expires_at < ${before}`,
  };
  return store satisfies MagicLinksStore;
}

export type PostgresMagicLinksStore = ReturnType<typeof createPostgresMagicLinksStore>;
