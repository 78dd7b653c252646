/**
 * The address directory on PostgreSQL (schema 54): which (organization, user) holds an address,
 * keyed by the address's SHA-256, so that a lookup naming no organization costs the same at
 * 100,000 organizations as at 1,000. Every write of users writes it in the same transaction
 * (insert, delete; addresses never change, and an organization's deletion deletes its rows).
 */
import { hashToken } from "../../kernel/ids";
import type { PgQueries } from "./database";

/** The directory's key: lower-case hex SHA-256 of the (already lower-cased) address, as emailHashSql computes it. */
export const emailHash = (email: string): string => hashToken(email);

/** The same hash in SQL, of a column or expression `of` (the migration's backfill and the rebuild). */
export const emailHashSql = (of: string): string => `encode(sha256(convert_to(${of}, 'UTF8')), 'hex')`;

/** Files a new account under its address. */
export const directoryInsertInTx = (tx: PgQueries, tenantId: string, userId: string, email: string) =>
  tx.run`INSERT INTO user_directory (email_hash, tenant_id, user_id) VALUES (${emailHash(email)}, ${tenantId}, ${userId}) ON CONFLICT DO NOTHING`;

/** Removes a deleted account (its address known: the caller read the row it deletes). */
export const directoryDeleteInTx = (tx: PgQueries, tenantId: string, userId: string, email: string) =>
  tx.run`DELETE FROM user_directory WHERE email_hash = ${emailHash(email)} AND tenant_id = ${tenantId} AND user_id = ${userId}`;

/**
 * Files the accounts of `userIds` in one organization as users now holds them (bulk inserts that
 * may have kept an existing row, the seed's insertJson).
 */
export async function directoryFileUsersInTx(tx: PgQueries, tenantId: string, userIds: string[]): Promise<void> {
  if (userIds.length === 0) return;
  await tx.unsafe(
    `INSERT INTO user_directory (email_hash, tenant_id, user_id)
     SELECT ${emailHashSql("email")}, tenant_id, id FROM users WHERE tenant_id = $1 AND id = ANY($2::text[]) ON CONFLICT DO NOTHING`,
    [tenantId, userIds],
  );
}

/**
 * Removes an organization's rows before the organization goes (its users cascade): by the hashes
 * of its members' addresses, so each delete reads the directory's key, not the whole table.
 */
export async function directoryDeleteTenantInTx(tx: PgQueries, tenantId: string): Promise<void> {
  const hashes = (await tx.all<{ email: string }>`SELECT email FROM users WHERE tenant_id = ${tenantId}`).map((u) => emailHash(u.email));
  if (hashes.length > 0) await tx.run`DELETE FROM user_directory WHERE email_hash = ANY(${hashes}::text[]) AND tenant_id = ${tenantId}`;
}

/** Rebuilds the whole directory from users (copy-to-postgres writes users by COPY-like batches, not through the stores). */
export async function rebuildUserDirectoryInTx(tx: PgQueries): Promise<void> {
  await tx.unsafe("DELETE FROM user_directory");
  await tx.unsafe(`INSERT INTO user_directory (email_hash, tenant_id, user_id) SELECT ${emailHashSql("email")}, tenant_id, id FROM users`);
}

/** copy-to-postgres's AFTER_COPY step (shape of its AfterCopyStep). */
export const userDirectoryAfterCopy = {
  name: "user_directory (the address directory)",
  run: (tx: PgQueries): Promise<void> => rebuildUserDirectoryInTx(tx),
};

/**
 * An address's accounts in every organization, found through the directory: `$1` the address's
 * hash, `$2` the address (compared on the account itself, so a stale directory row finds
 * nothing). `select` over the account `u` and its organization `t`. The directory is read in a
 * CTE of its own (MATERIALIZED): a distributed database plans it first, on the one shard of the
 * hash, and joins its few rows to users by key (users and the directory are not co-located).
 * A statement to put in a WITH list: `dir` then the accounts.
 */
export const addressAccounts = (select: string): string => `dir AS MATERIALIZED (SELECT tenant_id, user_id FROM user_directory WHERE email_hash = $1),
  found AS MATERIALIZED (SELECT ${select}
    FROM dir d
    JOIN users u ON u.tenant_id = d.tenant_id AND u.id = d.user_id
    JOIN tenants t ON t.id = u.tenant_id
   WHERE u.email = $2)`;
