import type { AccountTokensStore } from "../../auth/email/repo";
import { type AccountTarget, type AccountTokenPurpose, type AccountTokenRow, MAX_WORKSPACES_PER_REQUEST } from "../../auth/email/repo";
import type { OutgoingMail } from "../../mail/repo";
import type { AuditEntry } from "../../security/repo";
import { type Pg, type PgTx, inEveryTenant } from "./database";
import type { PgEnqueueInTx } from "./mail";
import type { PgAuditInTx } from "./sessions";
import { unnamedLinksWindow } from "./unnamed-links";
import { addressAccounts, emailHash } from "./user-directory";

const COLS = "token_hash, purpose, tenant_id, user_id, email, expires_at, used_at, created_at";

/**
 * The accounts a link for `email` may go to without a tenant (magic link, reset): in organizations
 * that are not disabled, proven addresses winning over unproven ones (docs/interface.md#tenancy, issue 16),
 * oldest first, at most `limit`. Found through the address directory (schema 54), so the cost
 * follows the address's accounts, not the number of organizations.
 */
export const ADDRESS_TARGETS = `WITH ${addressAccounts("u.*, t.subdomain, t.name AS tenant_name, t.disabled_at")}
     SELECT * FROM found
     WHERE (email_verified_at IS NOT NULL OR NOT EXISTS (SELECT 1 FROM found v WHERE v.email_verified_at IS NOT NULL))
       AND disabled_at IS NULL
     ORDER BY created_at, id LIMIT $3`;

export async function addressTargets(pg: Pg, email: string, limit: number): Promise<AccountTarget[]> {
  const rows = await pg.unsafe<AccountTarget & { disabled_at: number | null }>(ADDRESS_TARGETS, [emailHash(email), email, limit]);
  return rows.map(({ disabled_at: _, ...target }) => target);
}

/** Locks a user's row for this transaction (not its key: sessions may still be inserted for it). */
export async function lockUserInTx(tx: PgTx, tenantId: string, userId: string): Promise<void> {
  await tx.all`SELECT 1 FROM users WHERE tenant_id = ${tenantId} AND id = ${userId} FOR NO KEY UPDATE`;
}

/**
 * Account tokens (password resets and address verifications share one table) and the proof of an
 * address, on PostgreSQL: the same functions as the SQLite store.
 */
export function createPostgresAccountTokensStore(pg: Pg, others: { security: PgAuditInTx; mail: PgEnqueueInTx }) {
  const unnamedLive = unnamedLinksWindow(pg);
  async function insertInTx(tx: PgTx, r: Omit<AccountTokenRow, "used_at">): Promise<void> {
    await tx.run`INSERT INTO account_tokens (tenant_id, token_hash, purpose, user_id, email, expires_at, created_at)
      VALUES (${r.tenant_id}, ${r.token_hash}, ${r.purpose}, ${r.user_id}, ${r.email}, ${r.expires_at}, ${r.created_at})`;
  }

  /**
   * Spends a live token and retires the user's other ones of its purpose; null when used, expired
   * or unknown. Single use across instances: a second UPDATE waits for the first, then finds
   * used_at set. The token's user row is locked first (every password and token write of a user
   * locks it before its tokens): two of the user's tokens spent at once, or a spend and a password
   * change, then queue instead of each holding a token the other wants to retire (a deadlock).
   */
  async function consumeInTx(tx: PgTx, tenantId: string, tokenHash: string, purpose: AccountTokenPurpose, now: number): Promise<AccountTokenRow | null> {
    const owner = await tx.one<{ user_id: string }>`SELECT user_id FROM account_tokens
      WHERE tenant_id = ${tenantId} AND token_hash = ${tokenHash} AND purpose = ${purpose}`;
    if (!owner) return null;
    await lockUserInTx(tx, tenantId, owner.user_id);
    const [row] = await tx.unsafe<AccountTokenRow>(
      `UPDATE account_tokens SET used_at = $4 WHERE tenant_id = $1 AND token_hash = $2 AND purpose = $3 AND used_at IS NULL AND expires_at > $4 RETURNING ${COLS}`,
      [tenantId, tokenHash, purpose, now],
    );
    if (!row) return null;
    await tx.run`UPDATE account_tokens SET used_at = ${now}
      WHERE tenant_id = ${row.tenant_id} AND user_id = ${row.user_id} AND purpose = ${purpose} AND used_at IS NULL`;
    return { ...row };
  }

  /** Marks the address proven (a no-op when it already was, or the user's address changed since). */
  const proveInTx = async (tx: PgTx, tenantId: string, userId: string, email: string, now: number): Promise<boolean> =>
    (await tx.run`UPDATE users SET email_verified_at = ${now}
      WHERE tenant_id = ${tenantId} AND id = ${userId} AND email = ${email} AND email_verified_at IS NULL`) === 1;

  const targetSelect = "SELECT u.*, t.subdomain, t.name AS tenant_name FROM users u JOIN tenants t ON t.id = u.tenant_id";

  const store = {
    insertInTx,
    /** The token row, its mail and its audit row in one commit: all or nothing; the audit row's detail gets the mail's id as `mail_id`. */
    issue: async (r: Omit<AccountTokenRow, "used_at">, mail: OutgoingMail, audit: AuditEntry, now: number): Promise<void> =>
      pg.begin(async (tx) => {
        await insertInTx(tx, r);
        const mailId = await others.mail.enqueueInTx(tx, mail, now);
        await others.security.auditInTx(tx, { ...audit, detail: { mail_id: mailId, ...audit.detail } }, now);
      }),
    target: async (tenantId: string, email: string): Promise<AccountTarget | null> =>
      (await pg.unsafe<AccountTarget>(`${targetSelect} WHERE u.tenant_id = $1 AND u.email = $2`, [tenantId, email]))[0] ?? null,
    targetById: async (tenantId: string, userId: string): Promise<AccountTarget | null> =>
      (await pg.unsafe<AccountTarget>(`${targetSelect} WHERE u.tenant_id = $1 AND u.id = $2`, [tenantId, userId]))[0] ?? null,
    /** Without a tenant: the address alone, oldest first; proven addresses win (docs/interface.md#tenancy, issue 16). */
    targetsAnyTenant: async (email: string): Promise<AccountTarget[]> => addressTargets(pg, email, MAX_WORKSPACES_PER_REQUEST),
    live: async (tenantId: string | null, tokenHash: string, purpose: AccountTokenPurpose, now: number): Promise<AccountTokenRow | null> =>
      tenantId !== null
        ? pg.one<AccountTokenRow>`SELECT token_hash, purpose, tenant_id, user_id, email, expires_at, used_at, created_at FROM account_tokens
            WHERE tenant_id = ${tenantId} AND token_hash = ${tokenHash} AND purpose = ${purpose} AND used_at IS NULL AND expires_at > ${now}`
        : // Mailed before tokens named their tenant: one probe of (tenant_id, token_hash) per
          // organization, only while such a token can still be live (unnamed-links.ts).
          !(await unnamedLive(now))
          ? null
          : pg
              .unsafe<AccountTokenRow>(`${inEveryTenant("account_tokens", "token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > $3")} LIMIT 1`, [
                tokenHash,
                purpose,
                now,
              ])
              .then((rows) => rows[0] ?? null),
    consumeInTx,
    proveInTx,
    /** A verification link redeemed: the token spent, the address proven and the audit row, in one commit. */
    verify: async (tenantId: string, tokenHash: string, now: number, entry: (row: AccountTokenRow, proven: boolean) => AuditEntry): Promise<AccountTokenRow | null> =>
      pg.begin(async (tx) => {
        const row = await consumeInTx(tx, tenantId, tokenHash, "email_verify", now);
        if (!row) return null;
        const proven = await proveInTx(tx, row.tenant_id, row.user_id, row.email, now);
        await others.security.auditInTx(tx, entry(row, proven), now);
        return row;
      }),
    purgeExpired: async (before: number): Promise<number> => pg.run`DELETE FROM account_tokens WHERE expires_at < ${before}`,
  };
  return store satisfies AccountTokensStore;
}

export type PostgresAccountTokensStore = ReturnType<typeof createPostgresAccountTokensStore>;
