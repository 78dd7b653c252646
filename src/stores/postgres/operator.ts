import { type Pg, ownApplicationName } from "./database";
import type {
  ConsoleInstanceRow, ConsoleJobRow, ConsoleMailRow, ConsoleOrganizationRow, NewOperatorSession, OperatorAuditEntry, OperatorAuditRow, OperatorRow, OperatorSessionListRow, OperatorSessionWithEmail, OperatorStore,
} from "../../operator/repo";
import { BACKUP_SCHEDULE_KEY, likePattern } from "../../operator/repo";

/**
 * The operators and their console on PostgreSQL: the same functions as SQLite's. The console's
 * reads go across organizations by design: the server's own view, never shown to an organization.
 */
export function createPostgresOperatorStore(pg: Pg) {
  const store = {
    create: async (r: OperatorRow) =>
      (await pg.run`INSERT INTO operators (id, email, password_hash, totp_secret, created_at)
                    VALUES (${r.id}, ${r.email}, ${r.password_hash}, ${r.totp_secret}, ${r.created_at}::bigint) ON CONFLICT (email) DO NOTHING`) === 1,
    byEmail: async (email: string) => pg.one<OperatorRow>`SELECT * FROM operators WHERE email = ${email}`,
    byId: async (id: string) => pg.one<OperatorRow>`SELECT * FROM operators WHERE id = ${id}`,
    list: async () => pg.all<OperatorRow>`SELECT * FROM operators ORDER BY created_at, email`,
    remove: async (email: string) => (await pg.run`DELETE FROM operators WHERE email = ${email}`) === 1,
    acceptStep: async (id: string, step: number, at: number) =>
      (await pg.run`UPDATE operators SET totp_last_step = ${step}::bigint, last_sign_in_at = ${at}::bigint
                    WHERE id = ${id} AND (totp_last_step IS NULL OR totp_last_step < ${step}::bigint)`) === 1,
    addChallenge: async (tokenHash: string, operatorId: string, expiresAt: number) =>
      void (await pg.run`INSERT INTO operator_challenges (token_hash, operator_id, expires_at) VALUES (${tokenHash}, ${operatorId}, ${expiresAt}::bigint)`),
    takeChallenge: async (tokenHash: string, now: number) => {
      const row = await pg.one<{ operator_id: string; expires_at: number }>`DELETE FROM operator_challenges WHERE token_hash = ${tokenHash} RETURNING operator_id, expires_at`;
      return row && row.expires_at > now ? row.operator_id : null;
    },
    peekChallenge: async (tokenHash: string, now: number) =>
      (await pg.one<{ operator_id: string }>`SELECT operator_id FROM operator_challenges WHERE token_hash = ${tokenHash} AND expires_at > ${now}::bigint`)?.operator_id ?? null,
    createSession: async (s: NewOperatorSession) =>
      void (await pg.run`INSERT INTO operator_sessions (id, token_hash, operator_id, created_at, last_used_at, expires_at, proven_at, ip, user_agent)
                         VALUES (${s.id}, ${s.tokenHash}, ${s.operatorId}, ${s.createdAt}::bigint, ${s.createdAt}::bigint, ${s.expiresAt}::bigint,
                                 ${s.createdAt}::bigint, ${s.ip}::text, ${s.userAgent}::text)`),
    sessionByHash: async (tokenHash: string, now: number, idleSince: number) =>
      pg.one<OperatorSessionWithEmail>`
        SELECT s.id, s.operator_id, s.created_at, s.last_used_at, s.expires_at, s.proven_at, s.ended_at, o.email
          FROM operator_sessions s JOIN operators o ON o.id = s.operator_id
         WHERE s.token_hash = ${tokenHash} AND s.ended_at IS NULL AND s.expires_at > ${now}::bigint AND s.last_used_at > ${idleSince}::bigint`,
    touchSession: async (id: string, at: number) =>
      void (await pg.run`UPDATE operator_sessions SET last_used_at = ${at}::bigint WHERE id = ${id} AND last_used_at < ${at}::bigint`),
    proveSession: async (id: string, at: number) =>
      void (await pg.run`UPDATE operator_sessions SET proven_at = ${at}::bigint, last_used_at = greatest(last_used_at, ${at}::bigint) WHERE id = ${id}`),
    endSession: async (id: string, at: number) => void (await pg.run`UPDATE operator_sessions SET ended_at = ${at}::bigint WHERE id = ${id} AND ended_at IS NULL`),
    replaceBackupCodes: async (operatorId: string, hashes: string[], at: number) =>
      pg.begin(async (tx) => {
        await tx.run`DELETE FROM operator_backup_codes WHERE operator_id = ${operatorId}`;
        for (const h of hashes) await tx.run`INSERT INTO operator_backup_codes (code_hash, operator_id, created_at) VALUES (${h}, ${operatorId}, ${at}::bigint)`;
      }),
    useBackupCode: async (operatorId: string, hash: string, at: number) =>
      (await pg.run`UPDATE operator_backup_codes SET used_at = ${at}::bigint WHERE code_hash = ${hash} AND operator_id = ${operatorId} AND used_at IS NULL`) === 1,
    remainingBackupCodes: async (operatorId: string) =>
      (await pg.one<{ n: number }>`SELECT count(*)::int AS n FROM operator_backup_codes WHERE operator_id = ${operatorId} AND used_at IS NULL`)!.n,
    sessionsOf: async (operatorId: string, now: number, idleSince: number) =>
      (await pg.all<OperatorSessionListRow>`
        SELECT id, created_at, last_used_at, expires_at, ip, user_agent FROM operator_sessions
         WHERE operator_id = ${operatorId} AND ended_at IS NULL AND expires_at > ${now}::bigint AND last_used_at > ${idleSince}::bigint
         ORDER BY last_used_at DESC, id COLLATE "C"`).map((r) => ({ ...r, created_at: Number(r.created_at), last_used_at: Number(r.last_used_at), expires_at: Number(r.expires_at) })),
    endSessionOf: async (operatorId: string, id: string, at: number) =>
      (await pg.run`UPDATE operator_sessions SET ended_at = ${at}::bigint WHERE operator_id = ${operatorId} AND id = ${id} AND ended_at IS NULL`) === 1,
    endOtherSessions: async (operatorId: string, keepId: string, at: number) =>
      pg.run`UPDATE operator_sessions SET ended_at = ${at}::bigint WHERE operator_id = ${operatorId} AND id <> ${keepId} AND ended_at IS NULL`,
    purgeExpired: async (now: number, before: number) => {
      await pg.run`DELETE FROM operator_challenges WHERE expires_at <= ${now}::bigint`;
      await pg.run`DELETE FROM operator_sessions WHERE expires_at < ${before}::bigint OR ended_at < ${before}::bigint`;
    },
    audit: async (e: OperatorAuditEntry, at: number) =>
      void (await pg.run`INSERT INTO operator_audit (operator_id, operator_email, action, target, ip, user_agent, detail, created_at)
                         VALUES (${e.operatorId}::text, ${e.operatorEmail}::text, ${e.action}, ${e.target}::text, ${e.ip}::text, ${e.userAgent}::text,
                                 ${JSON.stringify(e.detail ?? {})}, ${at}::bigint)`),
    auditPage: async (limit: number, offset: number) => ({
      rows: await pg.all<OperatorAuditRow>`
        SELECT id, operator_email, action, target, ip, user_agent, detail, created_at FROM operator_audit
         ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
      total: (await pg.one<{ n: number }>`SELECT count(*)::int AS n FROM operator_audit`)!.n,
    }),
    organizations: async (q: string, limit: number, offset: number) => {
      const p = likePattern(q);
      const rows = await pg.all<ConsoleOrganizationRow>`
        SELECT t.id, t.name, t.subdomain, t.created_at, t.disabled_at,
               (SELECT count(*)::int FROM users u WHERE u.tenant_id = t.id) AS members,
               coalesce((SELECT sum(c.n)::bigint FROM deal_counts c WHERE c.tenant_id = t.id AND c.assignee = '*'), 0) AS deals,
               (SELECT max(s.last_used_at) FROM sessions s WHERE s.tenant_id = t.id) AS last_activity_at
          FROM (SELECT t.id FROM tenants t WHERE (${q} = '' OR lower(t.subdomain) LIKE ${p} OR lower(t.name) LIKE ${p})
                 ORDER BY t.created_at DESC, t.subdomain LIMIT ${limit} OFFSET ${offset}) page
          JOIN tenants t ON t.id = page.id
         ORDER BY t.created_at DESC, t.subdomain`;
      const total = (await pg.one<{ n: number }>`SELECT count(*)::int AS n FROM tenants t WHERE (${q} = '' OR lower(t.subdomain) LIKE ${p} OR lower(t.name) LIKE ${p})`)!.n;
      return { rows: rows.map((r) => ({ ...r, deals: Number(r.deals) })), total };
    },
    organizationCounts: async () =>
      (await pg.one<{ total: number; disabled: number }>`SELECT count(*)::int AS total, count(disabled_at)::int AS disabled FROM tenants`)!,
    mailQueue: async (status: "pending" | "failed" | null, limit: number, offset: number) => {
      const rows = await pg.all<ConsoleMailRow>`
        SELECT m.id, m.tenant_id, t.subdomain, m.kind, m.recipient, m.subject, m.status, m.attempts, m.next_attempt_at, m.last_error, m.created_at
          FROM mail_outbox m LEFT JOIN tenants t ON t.id = m.tenant_id
         WHERE (${status}::text IS NULL AND m.status IN ('pending', 'sending', 'failed') OR m.status = ${status}::text)
         ORDER BY m.created_at DESC, m.id DESC LIMIT ${limit} OFFSET ${offset}`;
      const total = (await pg.one<{ n: number }>`SELECT count(*)::int AS n FROM mail_outbox m
         WHERE (${status}::text IS NULL AND m.status IN ('pending', 'sending', 'failed') OR m.status = ${status}::text)`)!.n;
      return { rows, total };
    },
    retryMail: async (id: string, now: number) => (await pg.run`UPDATE mail_outbox SET next_attempt_at = ${now}::bigint WHERE id = ${id} AND status = 'pending'`) === 1,
    discardMail: async (id: string) => (await pg.run`DELETE FROM mail_outbox WHERE id = ${id} AND status IN ('pending', 'failed')`) === 1,
    jobs: async (limit: number, offset: number) => ({
      rows: await pg.all<ConsoleJobRow>`
        SELECT j.id, j.tenant_id, t.subdomain, j.kind, j.status, j.total, j.done, j.error_count, j.created_at, j.finished_at
          FROM crm_jobs j JOIN tenants t ON t.id = j.tenant_id ORDER BY j.created_at DESC, j.id DESC LIMIT ${limit} OFFSET ${offset}`,
      total: (await pg.one<{ n: number }>`SELECT count(*)::int AS n FROM crm_jobs`)!.n,
    }),
    runningJobs: async () => (await pg.one<{ n: number }>`SELECT count(*)::int AS n FROM crm_jobs WHERE status = 'running'`)!.n,
    sizes: async () => {
      const db = await pg.one<{ n: number }>`SELECT pg_database_size(current_database())::bigint AS n`;
      // The WAL directory is readable by superusers and pg_monitor only: null when refused.
      const wal = await pg.one<{ n: number }>`SELECT coalesce(sum(size), 0)::bigint AS n FROM pg_ls_waldir()`.catch(() => null);
      return { database_bytes: db ? Number(db.n) : null, wal_bytes: wal ? Number(wal.n) : null };
    },
    // Every suite process names its pool's connections `workspace-suite:<pid>` (database.ts): a
    // process is one name at one address. The seed and the command line name theirs the same way
    // and show as well while they run, which is what an operator wants to see too.
    instances: async () =>
      (
        await pg.all<{ name: string; address: string | null; connections: number; since: Date; mine: boolean }>`
          SELECT application_name AS name, host(client_addr) AS address, count(*)::int AS connections, min(backend_start) AS since,
                 bool_or(pid = pg_backend_pid()) AS mine
            FROM pg_stat_activity
           WHERE datname = current_database() AND application_name LIKE 'workspace-suite:%'
           GROUP BY application_name, client_addr ORDER BY min(backend_start), application_name`
      ).map((r): ConsoleInstanceRow => ({ name: r.name, address: r.address, connections: r.connections, since: new Date(r.since).getTime(), mine: r.mine })),
    backupSchedule: async () => (await pg.one<{ value: string }>`SELECT value FROM settings WHERE key = ${BACKUP_SCHEDULE_KEY}`)?.value ?? null,
    setBackupSchedule: async (json: string) => {
      await pg.run`INSERT INTO settings (key, value) VALUES (${BACKUP_SCHEDULE_KEY}, ${json}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
    },
  };
  return store satisfies OperatorStore;
}
