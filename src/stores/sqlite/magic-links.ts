import type { MagicLinksStore, MagicLinkRow, MagicLinkTarget } from "../../auth/magic-link/repo";
import { MAX_WORKSPACES_PER_REQUEST } from "../../auth/magic-link/repo";
import { type Db, writeTxAsync } from "../../db/database";
import type { UserRow } from "../../team/repo";
import type { OutgoingMail } from "../../mail/repo";
import type { AuditEntry } from "../../security/repo";
import type { SqliteMailStore } from "./mail";
import type { SqliteSecurityStore } from "./security";

/** SQL of magic links. Every statement is prepared once. */
export function createSqliteMagicLinksStore(db: Db, others: { security: SqliteSecurityStore; mail: SqliteMailStore }) {
  const insert = db.prepare<never, [string, string, string, number, number]>(
    "INSERT INTO magic_links (token_hash, tenant_id, user_id, expires_at, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
  );
  const target = db.prepare<MagicLinkTarget, [string, string]>(
    `SELECT u.*, t.subdomain, t.name AS tenant_name FROM users u JOIN tenants t ON t.id = u.tenant_id
     WHERE u.tenant_id = ?1 AND u.email = ?2`,
  );
  // A request without a tenant: the address alone, across workspaces (oldest membership first).
  // Proven addresses win: unproven accounts count only when the address has no proven one, so a
  // workspace someone else opened with this address receives no link (issue 16).
  const targetsAnyTenant = db.prepare<MagicLinkTarget, [string, number]>(
    `SELECT u.*, t.subdomain, t.name AS tenant_name FROM users u JOIN tenants t ON t.id = u.tenant_id
     WHERE u.email = ?1
       AND (u.email_verified_at IS NOT NULL OR NOT EXISTS (SELECT 1 FROM users v WHERE v.email = ?1 AND v.email_verified_at IS NOT NULL))
       AND t.disabled_at IS NULL -- a disabled organization's accounts get no mail (suite tenant disable)
     ORDER BY u.created_at, u.id LIMIT ?2`,
  );
  // Live only, by its hash and, unless it predates links that name their tenant, its tenant.
  const live = db.prepare<MagicLinkRow, [string, number, string | null]>(
    "SELECT * FROM magic_links WHERE token_hash = ?1 AND (?3 IS NULL OR tenant_id = ?3) AND used_at IS NULL AND expires_at > ?2",
  );
  // Single use: of two concurrent verifies, exactly one sees a row come back.
  const consume = db.prepare<{ tenant_id: string; user_id: string }, [string, string, number]>(
    `UPDATE magic_links SET used_at = ?3
     WHERE token_hash = ?1 AND tenant_id = ?2 AND used_at IS NULL AND expires_at > ?3
     RETURNING tenant_id, user_id`,
  );
  // Signing in with one link retires the user's other outstanding links.
  const retireOthers = db.prepare<never, [string, string, number]>(
    "UPDATE magic_links SET used_at = ?3 WHERE tenant_id = ?1 AND user_id = ?2 AND used_at IS NULL",
  );
  // A used link proves its user's address: the mail reached it.
  const prove = db.prepare<never, [string, string, number]>(
    "UPDATE users SET email_verified_at = ?3 WHERE tenant_id = ?1 AND id = ?2 AND email_verified_at IS NULL",
  );
  const purge = db.prepare<never, [number]>("DELETE FROM magic_links WHERE expires_at < ?1");

  const store = {
    insertInTx: (r: Omit<MagicLinkRow, "used_at">) => void insert.run(r.token_hash, r.tenant_id, r.user_id, r.expires_at, r.created_at),
    /** The link, its mail and its audit row in one transaction: either all exist or none does. */
    issue: async (r: Omit<MagicLinkRow, "used_at">, mail: OutgoingMail, audit: AuditEntry, now: number) =>
      writeTxAsync(db, () => {
        insert.run(r.token_hash, r.tenant_id, r.user_id, r.expires_at, r.created_at);
        // Looked up on each call, not kept: tests wrap enqueueInTx to note mailed links as secrets.
        const mailId = others.mail.enqueueInTx(mail, now);
        others.security.auditInTx({ ...audit, detail: { mail_id: mailId, ...audit.detail } }, now);
      }),
    target: async (tenantId: string, email: string) => target.get(tenantId, email),
    targetsAnyTenant: async (email: string) => targetsAnyTenant.all(email, MAX_WORKSPACES_PER_REQUEST),
    live: async (tenantId: string | null, tokenHash: string, now: number) => live.get(tokenHash, now, tenantId),
    /** Marks the link used; answers its user, or null when it was used, expired or unknown. */
    consume: async (tokenHash: string, tenantId: string, now: number) =>
      writeTxAsync(db, () => {
        const row = consume.get(tokenHash, tenantId, now);
        if (row) {
          retireOthers.run(row.tenant_id, row.user_id, now);
          prove.run(row.tenant_id, row.user_id, now);
        }
        return row ?? null;
      }),
    /** Deletes links that expired before `before`; answers how many. */
    purgeExpired: async (before: number) => writeTxAsync(db, () => purge.run(before).changes),
  };
  return store satisfies MagicLinksStore;
}

export type SqliteMagicLinksStore = ReturnType<typeof createSqliteMagicLinksStore>;
