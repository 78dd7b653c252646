import type { OidcStore, ProviderRow, IdentityRow, FlowRow } from "../../auth/sign-in-providers/repo";
import { type Db, writeTxAsync } from "../../db/database";
import type { AuditEntry } from "../../security/repo";
import type { UserRow } from "../../team/repo";
import { type SqliteUsersStore } from "./users";
import type { ProviderKind } from "../../auth/sign-in-providers/model";

type Audit = (e: AuditEntry, now: number) => void;

/** SQL of identity providers, linked identities and flows under way. Every read names the tenant. */
export function createSqliteOidcStore(db: Db, others: { users: SqliteUsersStore; auditInTx: Audit }) {
  const cols = "id, tenant_id, kind, name, issuer, client_id, client_secret_sealed, allowed_domains, auto_join, default_profile_id, enabled, created_at, updated_at";
  const insertProvider = db.prepare<never, [string, string, string, string, string | null, string, string, string, number, string | null, number, number]>(
    `INSERT INTO identity_providers (${cols}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?12)`,
  );
  const updateProvider = db.prepare<never, [string, string, string, string | null, string, string, string, number, string | null, number, number]>(
    `UPDATE identity_providers SET name = ?3, issuer = ?4, client_id = ?5, client_secret_sealed = ?6, allowed_domains = ?7, auto_join = ?8,
            default_profile_id = ?9, enabled = ?10, updated_at = ?11 WHERE tenant_id = ?1 AND id = ?2`,
  );
  const deleteProvider = db.prepare<never, [string, string]>("DELETE FROM identity_providers WHERE tenant_id = ?1 AND id = ?2");
  const providerById = db.prepare<ProviderRow, [string, string]>("SELECT * FROM identity_providers WHERE tenant_id = ?1 AND id = ?2");
  const providerByName = db.prepare<ProviderRow, [string, string]>("SELECT * FROM identity_providers WHERE tenant_id = ?1 AND name = ?2");
  const providerPage = db.prepare<ProviderRow, [string, number, number]>(
    "SELECT * FROM identity_providers WHERE tenant_id = ?1 ORDER BY created_at, id LIMIT ?2 OFFSET ?3",
  );
  const providerCount = db.prepare<{ n: number }, [string]>("SELECT count(*) AS n FROM identity_providers WHERE tenant_id = ?1");
  const enabledProviders = db.prepare<ProviderRow, [string]>(
    "SELECT * FROM identity_providers WHERE tenant_id = ?1 AND enabled = 1 ORDER BY created_at, id",
  );

  const insertIdentity = db.prepare<never, [string, string, string, string, string, string, string | null, number]>(
    "INSERT INTO user_identities (id, tenant_id, user_id, provider_id, issuer, subject, email, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
  );
  const identityBySubject = db.prepare<IdentityRow, [string, string, string]>(
    "SELECT * FROM user_identities WHERE tenant_id = ?1 AND issuer = ?2 AND subject = ?3",
  );
  const identityById = db.prepare<IdentityRow, [string, string, string]>("SELECT * FROM user_identities WHERE tenant_id = ?1 AND user_id = ?2 AND id = ?3");
  const identitiesOfUser = db.prepare<IdentityRow & { provider_name: string; kind: ProviderKind }, [string, string, number, number]>(
    `SELECT i.*, p.name AS provider_name, p.kind AS kind FROM user_identities i
       JOIN identity_providers p ON p.tenant_id = i.tenant_id AND p.id = i.provider_id
      WHERE i.tenant_id = ?1 AND i.user_id = ?2 ORDER BY i.created_at, i.id LIMIT ?3 OFFSET ?4`,
  );
  const identityCount = db.prepare<{ n: number }, [string, string]>("SELECT count(*) AS n FROM user_identities WHERE tenant_id = ?1 AND user_id = ?2");
  const deleteIdentity = db.prepare<never, [string, string, string]>("DELETE FROM user_identities WHERE tenant_id = ?1 AND user_id = ?2 AND id = ?3");
  const touchIdentity = db.prepare<never, [string, string, number]>("UPDATE user_identities SET last_used_at = ?3 WHERE tenant_id = ?1 AND id = ?2");

  const insertFlow = db.prepare<never, [string, string, string, string | null, string, string, string, number, number]>(
    `INSERT INTO oauth_flows (state_hash, tenant_id, provider_id, user_id, browser_hash, verifier_sealed, nonce, created_at, expires_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)`,
  );
  // Spent by the first callback that names it, whatever happens next: a state works once.
  const spendFlow = db.prepare<FlowRow, [string, string]>("DELETE FROM oauth_flows WHERE state_hash = ?2 AND tenant_id = ?1 RETURNING *");
  const flowByState = db.prepare<FlowRow, [string, string]>("SELECT * FROM oauth_flows WHERE state_hash = ?2 AND tenant_id = ?1");
  const purgeFlows = db.prepare<never, [number]>("DELETE FROM oauth_flows WHERE expires_at <= ?1");

  const store = {
    insertProvider: async (p: ProviderRow, audit: AuditEntry) =>
      writeTxAsync(db, () => {
        insertProvider.run(p.id, p.tenant_id, p.kind, p.name, p.issuer, p.client_id, p.client_secret_sealed, p.allowed_domains, p.auto_join, p.default_profile_id, p.enabled, p.created_at);
        others.auditInTx(audit, p.created_at);
      }),
    updateProvider: async (p: ProviderRow, audit: AuditEntry) =>
      writeTxAsync(db, () => {
        updateProvider.run(p.tenant_id, p.id, p.name, p.issuer, p.client_id, p.client_secret_sealed, p.allowed_domains, p.auto_join, p.default_profile_id, p.enabled, p.updated_at);
        others.auditInTx(audit, p.updated_at);
      }),
    /** false when there was no such provider. Its identities and flows go with it. */
    deleteProvider: async (tenantId: string, id: string, audit: AuditEntry, now: number) =>
      writeTxAsync(db, () => {
        if (deleteProvider.run(tenantId, id).changes !== 1) return false;
        others.auditInTx(audit, now);
        return true;
      }),
    provider: async (tenantId: string, id: string) => providerById.get(tenantId, id),
    providerByName: async (tenantId: string, name: string) => providerByName.get(tenantId, name),
    providerPage: async (tenantId: string, limit: number, offset: number) => providerPage.all(tenantId, limit, offset),
    providerCount: async (tenantId: string) => providerCount.get(tenantId)!.n,
    enabledProviders: async (tenantId: string) => enabledProviders.all(tenantId),

    identity: async (tenantId: string, issuer: string, subject: string) => identityBySubject.get(tenantId, issuer, subject),
    identityOfUser: async (tenantId: string, userId: string, id: string) => identityById.get(tenantId, userId, id),
    identitiesOfUser: async (tenantId: string, userId: string, limit: number, offset: number) => identitiesOfUser.all(tenantId, userId, limit, offset),
    identityCount: async (tenantId: string, userId: string) => identityCount.get(tenantId, userId)!.n,
    touchIdentity: async (tenantId: string, id: string, now: number) => void (await writeTxAsync(db, () => touchIdentity.run(tenantId, id, now))),
    /** Links an identity; "taken" when (issuer, subject) is already linked in this organization. */
    linkIdentity: async (row: IdentityRow, audit: AuditEntry) =>
      writeTxAsync(db, (): "linked" | "taken" => {
        if (identityBySubject.get(row.tenant_id, row.issuer, row.subject)) return "taken";
        insertIdentity.run(row.id, row.tenant_id, row.user_id, row.provider_id, row.issuer, row.subject, row.email, row.created_at);
        others.auditInTx(audit, row.created_at);
        return "linked";
      }),
    /**
     * A new member and their identity, all or nothing; "exists" when the address or the identity
     * was taken meanwhile.
     */
    join: async (user: Omit<UserRow, "updated_at">, identity: IdentityRow, audit: AuditEntry) =>
      writeTxAsync(db, (): "joined" | "exists" => {
        if (others.users.byEmailInTx(user.tenant_id, user.email)) return "exists";
        if (identityBySubject.get(identity.tenant_id, identity.issuer, identity.subject)) return "exists";
        others.users.insertInTx(user);
        insertIdentity.run(identity.id, identity.tenant_id, identity.user_id, identity.provider_id, identity.issuer, identity.subject, identity.email, identity.created_at);
        others.auditInTx(audit, identity.created_at);
        return "joined";
      }),
    unlinkIdentity: async (tenantId: string, userId: string, id: string, audit: AuditEntry, now: number) =>
      writeTxAsync(db, () => {
        if (deleteIdentity.run(tenantId, userId, id).changes !== 1) return false;
        others.auditInTx(audit, now);
        return true;
      }),

    openFlow: async (f: FlowRow) => void (await writeTxAsync(db, () => insertFlow.run(f.state_hash, f.tenant_id, f.provider_id, f.user_id, f.browser_hash, f.verifier_sealed, f.nonce, f.created_at, f.expires_at))),
    /** The flow a state names, by the organization the state names and the state's hash. */
    flow: async (tenantId: string, stateHash: string) => flowByState.get(tenantId, stateHash),
    spendFlow: async (tenantId: string, stateHash: string) => writeTxAsync(db, () => spendFlow.get(tenantId, stateHash)),
    purgeExpired: async (before: number) => void (await writeTxAsync(db, () => purgeFlows.run(before))),
  };
  return store satisfies OidcStore;
}

export type SqliteOidcStore = ReturnType<typeof createSqliteOidcStore>;
