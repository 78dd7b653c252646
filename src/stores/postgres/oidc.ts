import type { OidcStore } from "../../auth/sign-in-providers/repo";
import type { ProviderKind } from "../../auth/sign-in-providers/model";
import type { FlowRow, IdentityRow, ProviderRow } from "../../auth/sign-in-providers/repo";
import type { AuditEntry } from "../../security/repo";
import type { UserRow } from "../../team/repo";
import type { Pg, PgTx } from "./database";
import { isPgUniqueViolation } from "../../kernel/unique-violation";
import type { PgAuditInTx } from "./sessions";

/** What joining needs of the users store, inside its transaction. */
export interface PgUsersInTx {
  byEmailInTx(tx: PgTx, tenantId: string, email: string): Promise<UserRow | null | undefined>;
  insertInTx(tx: PgTx, u: Omit<UserRow, "updated_at">): Promise<unknown>;
}

const PROVIDER_COLS = "id, tenant_id, kind, name, issuer, client_id, client_secret_sealed, allowed_domains, auto_join, default_profile_id, enabled, created_at, updated_at";
const IDENTITY_COLS = "id, tenant_id, user_id, provider_id, issuer, subject, email, created_at, last_used_at";
const FLOW_COLS = "state_hash, tenant_id, provider_id, user_id, browser_hash, verifier_sealed, nonce, created_at, expires_at";

/**
 * Identity providers, linked identities and flows under way, on PostgreSQL: the same functions as
 * the SQLite store. Uniqueness (a provider's name, an identity's subject, a new member's address)
 * is the database's: a link is an INSERT … ON CONFLICT DO NOTHING, and a join that loses a race
 * rolls back on the unique violation and answers "exists", as the SQLite check before the insert.
 */
export function createPostgresOidcStore(pg: Pg, others: { users: PgUsersInTx; security: PgAuditInTx }) {
  const audit = (tx: PgTx, e: AuditEntry, now: number) => others.security.auditInTx(tx, e, now);
  const one = async <T>(text: string, params: unknown[]) => (await pg.unsafe<T>(text, params))[0] ?? null;
  const all = async <T>(text: string, params: unknown[]) => [...(await pg.unsafe<T>(text, params))];

  async function insertIdentityInTx(tx: PgTx, r: IdentityRow): Promise<boolean> {
    const rows = await tx.all`INSERT INTO user_identities (tenant_id, id, user_id, provider_id, issuer, subject, email, created_at)
      VALUES (${r.tenant_id}, ${r.id}, ${r.user_id}, ${r.provider_id}, ${r.issuer}, ${r.subject}, ${r.email}, ${r.created_at})
      ON CONFLICT (tenant_id, issuer, subject) DO NOTHING RETURNING id`;
    return rows.length === 1;
  }

  const store = {
    /** Throws PostgreSQL's unique violation (23505, identity_providers_by_name) on a taken name. */
    insertProvider: async (p: ProviderRow, entry: AuditEntry): Promise<void> =>
      pg.begin(async (tx) => {
        await tx.run`INSERT INTO identity_providers (tenant_id, id, kind, name, issuer, client_id, client_secret_sealed, allowed_domains, auto_join, default_profile_id, enabled, created_at, updated_at)
          VALUES (${p.tenant_id}, ${p.id}, ${p.kind}, ${p.name}, ${p.issuer}, ${p.client_id}, ${p.client_secret_sealed}, ${p.allowed_domains},
                  ${p.auto_join}, ${p.default_profile_id}, ${p.enabled}, ${p.created_at}, ${p.created_at})`;
        await audit(tx, entry, p.created_at);
      }),
    updateProvider: async (p: ProviderRow, entry: AuditEntry): Promise<void> =>
      pg.begin(async (tx) => {
        await tx.run`UPDATE identity_providers SET name = ${p.name}, issuer = ${p.issuer}, client_id = ${p.client_id},
            client_secret_sealed = ${p.client_secret_sealed}, allowed_domains = ${p.allowed_domains}, auto_join = ${p.auto_join},
            default_profile_id = ${p.default_profile_id}, enabled = ${p.enabled}, updated_at = ${p.updated_at}
          WHERE tenant_id = ${p.tenant_id} AND id = ${p.id}`;
        await audit(tx, entry, p.updated_at);
      }),
    /** false when there was no such provider. Its identities and flows go with it. */
    deleteProvider: async (tenantId: string, id: string, entry: AuditEntry, now: number): Promise<boolean> =>
      pg.begin(async (tx) => {
        if ((await tx.run`DELETE FROM identity_providers WHERE tenant_id = ${tenantId} AND id = ${id}`) !== 1) return false;
        await audit(tx, entry, now);
        return true;
      }),
    provider: async (tenantId: string, id: string) =>
      one<ProviderRow>(`SELECT ${PROVIDER_COLS} FROM identity_providers WHERE tenant_id = $1 AND id = $2`, [tenantId, id]),
    providerByName: async (tenantId: string, name: string) =>
      one<ProviderRow>(`SELECT ${PROVIDER_COLS} FROM identity_providers WHERE tenant_id = $1 AND name = $2`, [tenantId, name]),
    providerPage: async (tenantId: string, limit: number, offset: number) =>
      all<ProviderRow>(`SELECT ${PROVIDER_COLS} FROM identity_providers WHERE tenant_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3`, [tenantId, limit, offset]),
    providerCount: async (tenantId: string): Promise<number> =>
      (await pg.one<{ n: number }>`SELECT count(*) AS n FROM identity_providers WHERE tenant_id = ${tenantId}`)!.n,
    enabledProviders: async (tenantId: string) =>
      all<ProviderRow>(`SELECT ${PROVIDER_COLS} FROM identity_providers WHERE tenant_id = $1 AND enabled = 1 ORDER BY created_at, id`, [tenantId]),

    identity: async (tenantId: string, issuer: string, subject: string) =>
      one<IdentityRow>(`SELECT ${IDENTITY_COLS} FROM user_identities WHERE tenant_id = $1 AND issuer = $2 AND subject = $3`, [tenantId, issuer, subject]),
    identityOfUser: async (tenantId: string, userId: string, id: string) =>
      one<IdentityRow>(`SELECT ${IDENTITY_COLS} FROM user_identities WHERE tenant_id = $1 AND user_id = $2 AND id = $3`, [tenantId, userId, id]),
    identitiesOfUser: async (tenantId: string, userId: string, limit: number, offset: number) =>
      all<IdentityRow & { provider_name: string; kind: ProviderKind }>(
        `SELECT ${IDENTITY_COLS.split(", ").map((c) => `i.${c}`).join(", ")}, p.name AS provider_name, p.kind AS kind FROM user_identities i
           JOIN identity_providers p ON p.tenant_id = i.tenant_id AND p.id = i.provider_id
          WHERE i.tenant_id = $1 AND i.user_id = $2 ORDER BY i.created_at, i.id LIMIT $3 OFFSET $4`,
        [tenantId, userId, limit, offset],
      ),
    identityCount: async (tenantId: string, userId: string): Promise<number> =>
      (await pg.one<{ n: number }>`SELECT count(*) AS n FROM user_identities WHERE tenant_id = ${tenantId} AND user_id = ${userId}`)!.n,
    touchIdentity: async (tenantId: string, id: string, now: number): Promise<undefined> => {
      await pg.run`UPDATE user_identities SET last_used_at = ${now} WHERE tenant_id = ${tenantId} AND id = ${id}`;
      return undefined;
    },
    /** Links an identity; "taken" when (issuer, subject) is already linked in this organization (by a racing link too). */
    linkIdentity: async (row: IdentityRow, entry: AuditEntry): Promise<"linked" | "taken"> =>
      pg.begin(async (tx) => {
        if (!(await insertIdentityInTx(tx, row))) return "taken";
        await audit(tx, entry, row.created_at);
        return "linked";
      }),
    /**
     * A new member and their identity, all or nothing; "exists" when the address or the identity
     * was taken meanwhile: seen before the insert, or (a join racing on another instance) refused
     * by the unique indexes, which rolls the whole transaction back.
     */
    join: async (user: Omit<UserRow, "updated_at">, identity: IdentityRow, entry: AuditEntry): Promise<"joined" | "exists"> => {
      try {
        return await pg.begin(async (tx) => {
          if (await others.users.byEmailInTx(tx, user.tenant_id, user.email)) return "exists" as const;
          await others.users.insertInTx(tx, user);
          // A conflict here means the identity is linked already: throwing rolls the user back too.
          if (!(await insertIdentityInTx(tx, identity))) throw new IdentityTaken();
          await audit(tx, entry, identity.created_at);
          return "joined" as const;
        });
      } catch (e) {
        if (e instanceof IdentityTaken || isPgUniqueViolation(e, "users_tenant_id_email_key")) return "exists";
        throw e;
      }
    },
    unlinkIdentity: async (tenantId: string, userId: string, id: string, entry: AuditEntry, now: number): Promise<boolean> =>
      pg.begin(async (tx) => {
        if ((await tx.run`DELETE FROM user_identities WHERE tenant_id = ${tenantId} AND user_id = ${userId} AND id = ${id}`) !== 1) return false;
        await audit(tx, entry, now);
        return true;
      }),

    openFlow: async (f: FlowRow): Promise<undefined> => {
      await pg.run`INSERT INTO oauth_flows (tenant_id, state_hash, provider_id, user_id, browser_hash, verifier_sealed, nonce, created_at, expires_at)
        VALUES (${f.tenant_id}, ${f.state_hash}, ${f.provider_id}, ${f.user_id}, ${f.browser_hash}, ${f.verifier_sealed}, ${f.nonce}, ${f.created_at}, ${f.expires_at})`;
      return undefined;
    },
    /** The flow a state names, by the organization the state names and the state's hash. */
    flow: async (tenantId: string, stateHash: string) =>
      one<FlowRow>(`SELECT ${FLOW_COLS} FROM oauth_flows WHERE tenant_id = $1 AND state_hash = $2`, [tenantId, stateHash]),
    /** Spent by the first callback that names it, on any instance: of two DELETEs, one gets the row. */
    spendFlow: async (tenantId: string, stateHash: string) =>
      one<FlowRow>(`DELETE FROM oauth_flows WHERE tenant_id = $1 AND state_hash = $2 RETURNING ${FLOW_COLS}`, [tenantId, stateHash]),
    purgeExpired: async (before: number): Promise<undefined> => {
      await pg.run`DELETE FROM oauth_flows WHERE expires_at <= ${before}`;
      return undefined;
    },
  };
  return store satisfies OidcStore;
}

/** A join's identity was linked by someone else meanwhile (rolls the join back). */
class IdentityTaken extends Error {}

export type PostgresOidcStore = ReturnType<typeof createPostgresOidcStore>;
