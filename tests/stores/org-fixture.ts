/**
 * The organizations group's stores on either backend, with one shape for the contract tests:
 * every store of either backend wired as the app wires them (createSqliteStores,
 * createPostgresStores), with the CRM's rename hook noted.
 */
import { newId } from "../../src/kernel/ids";
import type { OutgoingMail } from "../../src/mail/repo";
import type { AuditEntry } from "../../src/security/repo";
import type { StoredKeys } from "../../src/security/key-file";
import type { MemberChange } from "../../src/team/members-repo";
import type { UserRow } from "../../src/team/repo";
import { type Pg, openPostgres } from "../../src/stores/postgres/database";
import { createPostgresStores } from "../../src/stores/postgres";
import { loadPostgresKeyStore } from "../../src/stores/postgres/security";
import { createSqliteStores } from "../../src/stores/sqlite";
import { createKeyStore } from "../../src/stores/sqlite/security";
import type { Db } from "../../src/db/database";
import type { Backend } from "./backends";

type NoInTx<T> = { [K in keyof T as K extends `${string}InTx` ? never : K]: T[K] };
type PgStores = ReturnType<typeof pgStores>;

/** The public functions of every store of the group, as the tests call them. */
export interface Org {
  tenants: NoInTx<PgStores["tenants"]>;
  users: NoInTx<PgStores["users"]>;
  members: Omit<PgStores["members"], "change"> & { change(tenantId: string, id: string, c: MemberChange, now: number, audits: Audits): ReturnType<PgStores["members"]["change"]> };
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

function pgStores(pg: Pg, renamed: Org["renamed"]) {
  const s = createPostgresStores(pg);
  // The CRM's rename hook, noted as the members store calls it (looked up on each call).
  const real = s.crm.assigneeRenamedInTx;
  s.crm.assigneeRenamedInTx = async (tx, ...a) => {
    renamed.push(a);
    return real(tx, ...a);
  };
  return { security: s.security, users: s.users, mail: s.mail, tenants: s.tenants, members: s.members, invitations: s.invitations, support: s.support, audit: s.auditLog };
}

type Audits = (b: UserRow, a: UserRow) => AuditEntry[];
/** The members store's change as the tests call it: the audit rows, a new name copied to the CRM. */
const withPlan = <M extends { change: (t: string, id: string, c: MemberChange, now: number, plan: (b: UserRow, a: UserRow) => { audits: AuditEntry[]; propagateRename: boolean }) => unknown }>(m: M) => ({
  ...m,
  change: (tenantId: string, id: string, c: MemberChange, now: number, audits: Audits) =>
    m.change(tenantId, id, c, now, (b, a) => ({ audits: audits(b, a), propagateRename: c.fullName !== undefined })),
});

function postgresOrg(pg: Pg): Org {
  const renamed: Org["renamed"] = [];
  const s = pgStores(pg, renamed);
  return { ...s, members: withPlan(s.members), mail: { ...s.mail, enqueue: (m: OutgoingMail, now: number) => pg.begin((tx) => s.mail.enqueueInTx(tx, m, now)) }, renamed } as unknown as Org;
}

function sqliteOrg(db: Db): Org {
  const renamed: Org["renamed"] = [];
  const s = createSqliteStores(db);
  const real = s.crm.assigneeRenamedInTx;
  s.crm.assigneeRenamedInTx = (...a) => {
    renamed.push(a);
    return real(...a);
  };
  return {
    security: s.security,
    users: s.users,
    mail: { ...s.mail, enqueue: async (m: OutgoingMail, now: number) => s.mail.enqueueInTx(m, now) },
    tenants: s.tenants,
    members: withPlan(s.members),
    invitations: s.invitations,
    support: s.support,
    audit: s.auditLog,
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
      tenantId: t.tenantId,
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
