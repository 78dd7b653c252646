import type { AccountTokensStore, AccountTokenPurpose, AccountTokenRow, AccountTarget } from "../../auth/email/repo";
import { MAX_WORKSPACES_PER_REQUEST } from "../../auth/email/repo";
import type { OutgoingMail } from "../../mail/repo";
import type { SqliteMailStore } from "./mail";
import { type Db, writeTxAsync } from "../../db/database";
import type { AuditEntry } from "../../security/repo";
import { type SqliteSecurityStore } from "./security";
import type { UserRow } from "../../team/repo";

/**
 * SQL of the account tokens (password resets and address verifications; they share one table)
 * and of the proof of an address. Every statement is prepared once.
 */
export function createSqliteAccountTokensStore(db: Db, others: { security: SqliteSecurityStore; mail: SqliteMailStore }) {
  const insert = db.prepare<never, [string, string, string, string, string, number, number]>(
    `INSERT INTO account_tokens (token_hash, purpose, tenant_id, user_id, email, expires_at, created_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)`,
  );
  const target = db.prepare<AccountTarget, [string, string]>(
    `SELECT u.*, t.subdomain, t.name AS tenant_name FROM users u JOIN tenants t ON t.id = u.tenant_id
     WHERE u.tenant_id = ?1 AND u.email = ?2`,
  );
  const targetById = db.prepare<AccountTarget, [string, string]>(
    `SELECT u.*, t.subdomain, t.name AS tenant_name FROM users u JOIN tenants t ON t.id = u.tenant_id
     WHERE u.tenant_id = ?1 AND u.id = ?2`,
  );
  // Without a tenant: the address alone, oldest first; proven addresses win (docs/interface.md#tenancy, issue 16).
  const targetsAnyTenant = db.prepare<AccountTarget, [string, number]>(
    `SELECT u.*, t.subdomain, t.name AS tenant_name FROM users u JOIN tenants t ON t.id = u.tenant_id
     WHERE u.email = ?1
       AND (u.email_verified_at IS NOT NULL OR NOT EXISTS (SELECT 1 FROM users v WHERE v.email = ?1 AND v.email_verified_at IS NOT NULL))
       AND t.disabled_at IS NULL -- a disabled organization's accounts get no mail (suite tenant disable)
     ORDER BY u.created_at, u.id LIMIT ?2`,
  );
  // By its hash and, unless it predates tokens that name their tenant, its tenant.
  const live = db.prepare<AccountTokenRow, [string, string, number, string | null]>(
    "SELECT * FROM account_tokens WHERE token_hash = ?1 AND (?4 IS NULL OR tenant_id = ?4) AND purpose = ?2 AND used_at IS NULL AND expires_at > ?3",
  );
  // Single use: of two concurrent redeems, exactly one sees a row come back.
  const consume = db.prepare<AccountTokenRow, [string, string, number, string]>(
    `UPDATE account_tokens SET used_at = ?3 WHERE token_hash = ?1 AND tenant_id = ?4 AND purpose = ?2 AND used_at IS NULL AND expires_at > ?3
     RETURNING *`,
  );
  const retire = db.prepare<never, [string, string, string, number]>(
    "UPDATE account_tokens SET used_at = ?4 WHERE tenant_id = ?1 AND user_id = ?2 AND purpose = ?3 AND used_at IS NULL",
  );
  // Proves the address the token was mailed to, and only while it is still the user's address.
  const prove = db.prepare<never, [string, string, string, number]>(
    "UPDATE users SET email_verified_at = ?4 WHERE tenant_id = ?1 AND id = ?2 AND email = ?3 AND email_verified_at IS NULL",
  );
  const purge = db.prepare<never, [number]>("DELETE FROM account_tokens WHERE expires_at < ?1");

  const insertInTx = (r: Omit<AccountTokenRow, "used_at">) =>
    void insert.run(r.token_hash, r.purpose, r.tenant_id, r.user_id, r.email, r.expires_at, r.created_at);

  const store = {
    insertInTx,
    /** The token row, the mail and its audit row in one transaction: all or nothing. */
    issue: async (r: Omit<AccountTokenRow, "used_at">, mail: OutgoingMail, audit: AuditEntry, now: number) =>
      writeTxAsync(db, () => {
        insertInTx(r);
        // Looked up on each call, not kept: tests wrap enqueueInTx to note mailed links as secrets.
        const mailId = others.mail.enqueueInTx(mail, now);
        others.security.auditInTx({ ...audit, detail: { mail_id: mailId, ...audit.detail } }, now);
      }),
    target: async (tenantId: string, email: string) => target.get(tenantId, email),
    targetById: async (tenantId: string, userId: string) => targetById.get(tenantId, userId),
    targetsAnyTenant: async (email: string) => targetsAnyTenant.all(email, MAX_WORKSPACES_PER_REQUEST),
    live: async (tenantId: string | null, tokenHash: string, purpose: AccountTokenPurpose, now: number) => live.get(tokenHash, purpose, now, tenantId),
    /** Spends a live token and retires the user's other ones of its purpose; null when used, expired or unknown. */
    consumeInTx(tenantId: string, tokenHash: string, purpose: AccountTokenPurpose, now: number): AccountTokenRow | null {
      const row = consume.get(tokenHash, purpose, now, tenantId);
      if (row) retire.run(row.tenant_id, row.user_id, purpose, now);
      return row ?? null;
    },
    /** Marks the address proven (a no-op when it already was, or the user's address changed since). */
    proveInTx: (tenantId: string, userId: string, email: string, now: number) => prove.run(tenantId, userId, email, now).changes === 1,
    /** A verification link redeemed: the token spent, the address proven and the audit row, in one commit. */
    verify: async (tenantId: string, tokenHash: string, now: number, entry: (row: AccountTokenRow, proven: boolean) => AuditEntry) =>
      writeTxAsync(db, () => {
        const row = consume.get(tokenHash, "email_verify", now, tenantId);
        if (!row) return null;
        retire.run(row.tenant_id, row.user_id, "email_verify", now);
        const proven = prove.run(row.tenant_id, row.user_id, row.email, now).changes === 1;
        others.security.auditInTx(entry(row, proven), now);
        return row;
      }),
    purgeExpired: async (before: number) => writeTxAsync(db, () => purge.run(before).changes),
  };
  return store satisfies AccountTokensStore;
}

export type SqliteAccountTokensStore = ReturnType<typeof createSqliteAccountTokensStore>;
