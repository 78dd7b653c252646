/**
 * The organizations group's stores on either backend, with one shape for the contract tests:
 * SQLite's repos as they are today, PostgreSQL's from src/stores/postgres/. Until the CRM and
 * sessions stores on PostgreSQL are merged, their `…InTx` hooks are stand-ins here that write the
 * same rows (sessions, the default pipeline) with the transaction handle they are given.
 */
import type { NewSessionRow } from "../../src/auth/repo";
import { createSessionsRepo } from "../../src/auth/repo";
import { createAuditRepo } from "../../src/audit/repo";
import { createCrmRepo } from "../../src/crm/repo";
import { DEFAULT_STAGES } from "../../src/crm/model";
import { newId } from "../../src/db/ids";
import { createMailRepo, type OutgoingMail } from "../../src/mail/repo";
import { type AuditEntry, createKeyStore, createSecurityRepo } from "../../src/security/repo";
import type { StoredKeys } from "../../src/security/key-file";
import { createTenantsRepo } from "../../src/tenants/repo";
import { createInvitationsRepo } from "../../src/users/invitations-repo";
import { createMembersRepo, type MemberChange } from "../../src/users/members-repo";
import { createUsersRepo, type UserRow } from "../../src/users/repo";
import { createSupportRepo } from "../../src/users/support-repo";
import { createPostgresAuditStore } from "../../src/stores/postgres/audit";
import { type Pg, type PgTx, openPostgres } from "../../src/stores/postgres/database";
import { createPostgresInvitationsStore } from "../../src/stores/postgres/invitations";
import { createPostgresMailStore } from "../../src/stores/postgres/mail";
import { createPostgresMembersStore } from "../../src/stores/postgres/members";
import { createPostgresSecurityStore, loadPostgresKeyStore } from "../../src/stores/postgres/security";
import { createPostgresSupportStore } from "../../src/stores/postgres/support";
import { createPostgresTenantsStore } from "../../src/stores/postgres/tenants";
import { createPostgresUsersStore } from "../../src/stores/postgres/users";
import type { Db } from "../../src/db/database";
import type { Backend } from "./backends";

type NoInTx<T> = { [K in keyof T as K extends `${string}InTx` ? never : K]: T[K] };
type PgStores = ReturnType<typeof pgStores>;

/** The public functions of every store of the group, as the tests call them. */
export interface Org {
  tenants: NoInTx<PgStores["tenants"]>;
  users: NoInTx<PgStores["users"]>;
  members: PgStores["members"];
  invitations: PgStores["invitations"];
  support: PgStores["support"];
  security: NoInTx<PgStores["security"]>;
  mail: NoInTx<PgStores["mail"]> & { enqueue(m: Parameters<PgStores["mail"]["enqueueInTx"]>[1], now: number): Promise<string> };
  audit: PgStores["audit"];
  /** Calls the CRM's rename hook received: (tenant, user, name, email). */
  renamed: Array<[string, string, string | null, string]>;
}

export interface OrgBackend {
  kind: Backend["kind"];
  org: Org;
  /** Another instance's stores on the same database (PostgreSQL: its own pool of connections). */
  instance(): Org;
  /** A count or other single value; `$1`-style parameters on both backends. */
  value<T = number>(sql: string, ...params: unknown[]): Promise<T>;
  /** The key file's view of the database; `flush` writes what `forget` dropped (PostgreSQL reads ahead). */
  keys(names: readonly string[]): Promise<StoredKeys & { flush(): Promise<void> }>;
  close(): Promise<void>;
}

const insertSessionInTx = (tx: PgTx, s: NewSessionRow) =>
  tx.run`INSERT INTO sessions (id, sid_hash, tenant_id, user_id, method, created_at, last_used_at, expires_at, proven_at, ip, user_agent)
         VALUES (${s.id}, ${s.sid_hash}, ${s.tenant_id}, ${s.user_id}, ${s.method}, ${s.created_at}::bigint, ${s.created_at}::bigint,
                 ${s.expires_at}::bigint, ${s.proven_at}::bigint, ${s.ip}::text, ${s.user_agent}::text)`;

async function seedStagesInTx(tx: PgTx, tenantId: string, now: number) {
  for (const [i, s] of DEFAULT_STAGES.entries()) {
    await tx.run`INSERT INTO pipeline_stages (id, tenant_id, key, name, color, position, probability, is_won, is_lost, created_at)
                 VALUES (${newId()}, ${tenantId}, ${s.key}, ${s.name}, ${s.color}, ${i}, ${s.probability}, ${s.is_won}, ${s.is_lost}, ${now}::bigint)`;
  }
}

function pgStores(pg: Pg, renamed: Org["renamed"]) {
  const security = createPostgresSecurityStore(pg);
  const users = createPostgresUsersStore(pg);
  const mail = createPostgresMailStore(pg);
  const sessions = { insertInTx: insertSessionInTx };
  const crm = { seedDefaultStagesInTx: seedStagesInTx };
  return {
    security,
    users,
    mail,
    tenants: createPostgresTenantsStore(pg, { users, crm, sessions, security }),
    members: createPostgresMembersStore(pg, {
      security,
      dealsReassignedInTx: async (tx, tenantId, from, to, now) =>
        tx.run`UPDATE deals SET assigned_to = ${to?.id ?? null}::text, updated_at = ${now}::bigint WHERE tenant_id = ${tenantId} AND assigned_to = ${from}`,
      renamedInTx: async (_tx, ...a) => void renamed.push(a),
    }),
    invitations: createPostgresInvitationsStore(pg, { users, sessions, security, mail }),
    support: createPostgresSupportStore(pg),
    audit: createPostgresAuditStore(pg),
  };
}

function postgresOrg(pg: Pg): Org {
  const renamed: Org["renamed"] = [];
  const s = pgStores(pg, renamed);
  return { ...s, mail: { ...s.mail, enqueue: (m, now) => pg.begin((tx) => s.mail.enqueueInTx(tx, m, now)) }, renamed };
}

function sqliteOrg(db: Db): Org {
  const renamed: Org["renamed"] = [];
  const security = createSecurityRepo(db);
  const users = createUsersRepo(db);
  const mail = createMailRepo(db);
  const crm = createCrmRepo(db);
  const sessions = createSessionsRepo(db, { security });
  const members = createMembersRepo(db, { security, dealsReassignedInTx: (...a) => crm.dealsReassignedInTx(...a) });
  return {
    security,
    users,
    mail: { ...mail, enqueue: async (m: OutgoingMail, now: number) => mail.enqueueInTx(m, now) },
    tenants: createTenantsRepo(db, { users, crm, sessions, security }),
    // SQLite's change takes a callback that writes inside its transaction; the PostgreSQL store
    // takes the audit rows and calls the CRM's rename hook itself. Same effect, adapted here.
    members: {
      ...members,
      change: (tenantId: string, id: string, c: MemberChange, now: number, audits: (b: UserRow, a: UserRow) => AuditEntry[]) =>
        members.change(tenantId, id, c, now, (b, a) => {
          if (c.fullName !== undefined) renamed.push([tenantId, a.id, a.full_name, a.email]);
          for (const e of audits(b, a)) security.auditInTx(e, now);
        }),
    },
    invitations: createInvitationsRepo(db, { users, sessions, security, mail }),
    support: createSupportRepo(db),
    audit: createAuditRepo(db),
    renamed,
  } as unknown as Org;
}

export function orgBackend(b: Backend): OrgBackend {
  if (b.kind === "sqlite") {
    const org = sqliteOrg(b.db);
    return {
      kind: "sqlite",
      org,
      instance: () => org,
      value: async <T>(sql: string, ...params: unknown[]) => {
        const row = b.db.query(sql.replace(/\$(\d+)/g, "?$1")).get(...(params as never[])) as Record<string, unknown> | null;
        return (row ? Object.values(row)[0] : null) as T;
      },
      keys: async () => ({ ...createKeyStore(b.db), flush: async () => {} }),
      close: () => b.close(),
    };
  }
  const pools: Pg[] = [];
  return {
    kind: "postgres",
    org: postgresOrg(b.pg),
    instance: () => {
      const pg = openPostgres(b.pg.url, { max: 4 });
      pools.push(pg);
      return postgresOrg(pg);
    },
    value: async <T>(sql: string, ...params: unknown[]) => {
      const row = (await b.pg.unsafe(sql, params))[0];
      return (row ? Object.values(row)[0] : null) as T;
    },
    keys: (names) => loadPostgresKeyStore(b.pg, names),
    close: async () => {
      for (const p of pools) await p.close();
      await b.close();
    },
  };
}

export const T0 = 1_700_000_000_000;

/** A new organization with its first admin (as signup writes it). */
export async function signup(org: Org, subdomain: string, now = T0) {
  const tenantId = newId();
  const adminId = newId();
  const { adminProfileId } = await org.tenants.createOrganization({
    tenant: { id: tenantId, name: `Org ${subdomain}`, subdomain, created_at: now },
    modules: ["crm", "users"],
    admin: { id: adminId, email: `admin@${subdomain}.test`, full_name: "Ada Admin", password_hash: "hash", created_at: now, email_verified_at: now },
    session: { id: newId(), sid_hash: newId(), method: "signup", expires_at: now + 3_600_000, proven_at: now, ip: "127.0.0.1", user_agent: "test" },
    audit: { action: "tenant.signup", ip: "127.0.0.1", userAgent: "test", detail: { subdomain } },
  });
  return { tenantId, adminId, adminProfileId };
}

export const mailTo = (tenantId: string | null, recipient: string, kind = "invitation") => ({
  tenantId,
  kind,
  recipient,
  subject: "Join us",
  text: "text body",
  html: "<p>html body</p>",
  link: "https://example.test/accept#token",
});

/** Invites `email` (admin profile when `admin`) and accepts it: a new member. */
export async function addMember(org: Org, t: { tenantId: string; adminId: string; adminProfileId: string }, email: string, admin = false, now = T0 + 1000) {
  const tokenHash = newId();
  const invited = await org.invitations.invite(
    {
      id: newId(),
      tenantId: t.tenantId,
      email,
      profileId: admin ? t.adminProfileId : null,
      profileNamed: true,
      invitedBy: t.adminId,
      tokenHash,
      expiresAt: now + 86_400_000,
      mail: mailTo(t.tenantId, email),
      who: { ip: null, userAgent: null },
    },
    now,
  );
  if (invited.kind === "member") throw new Error(`${email} is already a member`);
  const accepted = await org.invitations.accept(
    {
      tokenHash,
      user: { id: newId(), full_name: email.split("@")[0]!, password_hash: "hash" },
      session: { id: newId(), sid_hash: newId(), method: "invitation", created_at: now, expires_at: now + 3_600_000, proven_at: now, ip: null, user_agent: null },
      who: { ip: null, userAgent: null },
    },
    now,
  );
  if (accepted.kind !== "accepted") throw new Error(`accept answered ${accepted.kind}`);
  return accepted.user;
}
