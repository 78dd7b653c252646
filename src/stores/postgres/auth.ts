import { createPostgresAccountTokensStore } from "./account-tokens";
import type { Pg } from "./database";
import { createPostgresMagicLinksStore } from "./magic-links";
import type { PgEnqueueInTx } from "./mail";
import { createPostgresOidcStore, type PgUsersInTx } from "./oidc";
import { createPostgresPasswordStore } from "./passwords";
import { createPostgresSessionsStore, type PgAuditInTx } from "./sessions";
import { createPostgresTwoFactorStore } from "./two-factor";

/** Every authentication store on PostgreSQL, wired to each other and to the stores they write through. */
export function createPostgresAuthStores(pg: Pg, others: { security: PgAuditInTx; mail: PgEnqueueInTx; users: PgUsersInTx }) {
  const { security, mail, users } = others;
  const accountTokens = createPostgresAccountTokensStore(pg, { security, mail });
  return {
    sessions: createPostgresSessionsStore(pg, { security }),
    twoFactor: createPostgresTwoFactorStore(pg, { security }),
    magicLinks: createPostgresMagicLinksStore(pg, { security, mail }),
    accountTokens,
    passwords: createPostgresPasswordStore(pg, { security, tokens: accountTokens, mail }),
    oidc: createPostgresOidcStore(pg, { users, security }),
  };
}

export type PostgresAuthStores = ReturnType<typeof createPostgresAuthStores>;
