import { statSync } from "node:fs";
import { type Db, writeTxAsync } from "../../db/database";
import type {
  ConsoleJobRow, ConsoleMailRow, ConsoleOrganizationRow, NewOperatorSession, OperatorAuditEntry, OperatorAuditRow, OperatorRow, OperatorSessionListRow, OperatorSessionWithEmail, OperatorStore,
} from "../../operator/repo";
import { BACKUP_SCHEDULE_KEY, likePattern } from "../../operator/repo";

/**
 * SQL of the operators and their console. Every statement is prepared once. The console's reads
 * go across organizations by design: the server's own view, never shown to an organization.
 */
export function createSqliteOperatorStore(db: Db) {
  const getSetting = db.prepare<{ value: string }, [string]>("SELECT value FROM settings WHERE key = ?1");
  const putSetting = db.prepare<never, [string, string]>("INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value");
  const insert = db.prepare<never, [string, string, string, string, number]>(
    "INSERT INTO operators (id, email, password_hash, totp_secret, created_at) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (email) DO NOTHING",
  );
  const byEmail = db.prepare<OperatorRow, [string]>("SELECT * FROM operators WHERE email = ?1");
  const byId = db.prepare<OperatorRow, [string]>("SELECT * FROM operators WHERE id = ?1");
  const list = db.prepare<OperatorRow, []>("SELECT * FROM operators ORDER BY created_at, email");
  const remove = db.prepare<never, [string]>("DELETE FROM operators WHERE email = ?1");
  const acceptStep = db.prepare<never, [string, number, number]>(
    "UPDATE operators SET totp_last_step = ?2, last_sign_in_at = ?3 WHERE id = ?1 AND (totp_last_step IS NULL OR totp_last_step < ?2)",
  );
  const addChallenge = db.prepare<never, [string, string, number]>("INSERT INTO operator_challenges (token_hash, operator_id, expires_at) VALUES (?1, ?2, ?3)");
  const takeChallenge = db.prepare<{ operator_id: string; expires_at: number }, [string]>("DELETE FROM operator_challenges WHERE token_hash = ?1 RETURNING operator_id, expires_at");
  const peekChallenge = db.prepare<{ operator_id: string }, [string, number]>("SELECT operator_id FROM operator_challenges WHERE token_hash = ?1 AND expires_at > ?2");
  const createSession = db.prepare<never, [string, string, string, number, number, string | null, string | null]>(
    `INSERT INTO operator_sessions (id, token_hash, operator_id, created_at, last_used_at, expires_at, proven_at, ip, user_agent)
     VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?4, ?6, ?7)`,
  );
  const sessionByHash = db.prepare<OperatorSessionWithEmail, [string, number, number]>(
    `SELECT s.id, s.operator_id, s.created_at, s.last_used_at, s.expires_at, s.proven_at, s.ended_at, o.email
       FROM operator_sessions s JOIN operators o ON o.id = s.operator_id
      WHERE s.token_hash = ?1 AND s.ended_at IS NULL AND s.expires_at > ?2 AND s.last_used_at > ?3`,
  );
  const touch = db.prepare<never, [string, number]>("UPDATE operator_sessions SET last_used_at = ?2 WHERE id = ?1 AND last_used_at < ?2");
  const prove = db.prepare<never, [string, number]>("UPDATE operator_sessions SET proven_at = ?2, last_used_at = max(last_used_at, ?2) WHERE id = ?1");
  const sessionsOf = db.prepare<OperatorSessionListRow, [string, number, number]>(
    `SELECT id, created_at, last_used_at, expires_at, ip, user_agent FROM operator_sessions
      WHERE operator_id = ?1 AND ended_at IS NULL AND expires_at > ?2 AND last_used_at > ?3 ORDER BY last_used_at DESC, id`,
  );
  const endOf = db.prepare<never, [string, string, number]>("UPDATE operator_sessions SET ended_at = ?3 WHERE operator_id = ?1 AND id = ?2 AND ended_at IS NULL");
  const endOthers = db.prepare<never, [string, string, number]>("UPDATE operator_sessions SET ended_at = ?3 WHERE operator_id = ?1 AND id <> ?2 AND ended_at IS NULL");
  const dropCodes = db.prepare<never, [string]>("DELETE FROM operator_backup_codes WHERE operator_id = ?1");
  const addCode = db.prepare<never, [string, string, number]>("INSERT INTO operator_backup_codes (code_hash, operator_id, created_at) VALUES (?1, ?2, ?3)");
  const useCode = db.prepare<never, [string, string, number]>("UPDATE operator_backup_codes SET used_at = ?3 WHERE code_hash = ?2 AND operator_id = ?1 AND used_at IS NULL");
  const codesLeft = db.prepare<{ n: number }, [string]>("SELECT count(*) AS n FROM operator_backup_codes WHERE operator_id = ?1 AND used_at IS NULL");
  const end = db.prepare<never, [string, number]>("UPDATE operator_sessions SET ended_at = ?2 WHERE id = ?1 AND ended_at IS NULL");
  const purgeChallenges = db.prepare<never, [number]>("DELETE FROM operator_challenges WHERE expires_at <= ?1");
  const purgeSessions = db.prepare<never, [number]>("DELETE FROM operator_sessions WHERE expires_at < ?1 OR ended_at < ?1");
  const audit = db.prepare<never, [string | null, string | null, string, string | null, string | null, string | null, string, number]>(
    `INSERT INTO operator_audit (operator_id, operator_email, action, target, ip, user_agent, detail, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`,
  );
  const auditPage = db.prepare<OperatorAuditRow, [number, number]>(
    "SELECT id, operator_email, action, target, ip, user_agent, detail, created_at FROM operator_audit ORDER BY created_at DESC, id DESC LIMIT ?1 OFFSET ?2",
  );
  const auditCount = db.prepare<{ n: number }, []>("SELECT count(*) AS n FROM operator_audit");

  const orgWhere = "(?1 = '' OR lower(t.subdomain) LIKE ?2 ESCAPE '\\' OR lower(t.name) LIKE ?2 ESCAPE '\\')";
  // The page's organizations first (a walk of tenants, sorted), then members from users, deals
  // from the trigger-kept deal_counts ('*' rows: one per stage) and the last activity from the
  // members' sessions for those 20 or so alone: counted for every organization before the sort,
  // 5,000 of them took 140 ms.
  const organizations = db.prepare<ConsoleOrganizationRow, [string, string, number, number]>(
    `SELECT t.id, t.name, t.subdomain, t.created_at, t.disabled_at,
            (SELECT count(*) FROM users u WHERE u.tenant_id = t.id) AS members,
            coalesce((SELECT sum(c.n) FROM deal_counts c WHERE c.tenant_id = t.id AND c.assignee = '*'), 0) AS deals,
            (SELECT max(s.last_used_at) FROM sessions s WHERE s.tenant_id = t.id) AS last_activity_at
       FROM (SELECT t.id FROM tenants t WHERE ${orgWhere} ORDER BY t.created_at DESC, t.subdomain LIMIT ?3 OFFSET ?4) page
       JOIN tenants t ON t.id = page.id
      ORDER BY t.created_at DESC, t.subdomain`,
  );
  const organizationsCount = db.prepare<{ n: number }, [string, string]>(`SELECT count(*) AS n FROM tenants t WHERE ${orgWhere}`);
  const organizationCounts = db.prepare<{ total: number; disabled: number }, []>(
    "SELECT count(*) AS total, coalesce(sum(disabled_at IS NOT NULL), 0) AS disabled FROM tenants",
  );
  const mailWhere = "(?1 IS NULL AND m.status IN ('pending', 'sending', 'failed') OR m.status = ?1)";
  const mailQueue = db.prepare<ConsoleMailRow, [string | null, number, number]>(
    `SELECT m.id, m.tenant_id, t.subdomain, m.kind, m.recipient, m.subject, m.status, m.attempts, m.next_attempt_at, m.last_error, m.created_at
       FROM mail_outbox m LEFT JOIN tenants t ON t.id = m.tenant_id
      WHERE ${mailWhere} ORDER BY m.created_at DESC, m.id DESC LIMIT ?2 OFFSET ?3`,
  );
  const mailCount = db.prepare<{ n: number }, [string | null]>(`SELECT count(*) AS n FROM mail_outbox m WHERE ${mailWhere}`);
  const retryMail = db.prepare<never, [string, number]>("UPDATE mail_outbox SET next_attempt_at = ?2 WHERE id = ?1 AND status = 'pending'");
  const discardMail = db.prepare<never, [string]>("DELETE FROM mail_outbox WHERE id = ?1 AND status IN ('pending', 'failed')");
  const jobs = db.prepare<ConsoleJobRow, [number, number]>(
    `SELECT j.id, j.tenant_id, t.subdomain, j.kind, j.status, j.total, j.done, j.error_count, j.created_at, j.finished_at
       FROM crm_jobs j JOIN tenants t ON t.id = j.tenant_id ORDER BY j.created_at DESC, j.id DESC LIMIT ?1 OFFSET ?2`,
  );
  const jobsCount = db.prepare<{ n: number }, []>("SELECT count(*) AS n FROM crm_jobs");
  const running = db.prepare<{ n: number }, []>("SELECT count(*) AS n FROM crm_jobs WHERE status = 'running'");
  const pages = db.prepare<{ n: number }, []>("SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()");

  const store = {
    create: async (r: OperatorRow) => writeTxAsync(db, () => insert.run(r.id, r.email, r.password_hash, r.totp_secret, r.created_at).changes === 1),
    byEmail: async (email: string) => byEmail.get(email) ?? null,
    byId: async (id: string) => byId.get(id) ?? null,
    list: async () => list.all(),
    remove: async (email: string) => writeTxAsync(db, () => remove.run(email).changes === 1),
    acceptStep: async (id: string, step: number, at: number) => writeTxAsync(db, () => acceptStep.run(id, step, at).changes === 1),
    addChallenge: async (tokenHash: string, operatorId: string, expiresAt: number) => void (await writeTxAsync(db, () => addChallenge.run(tokenHash, operatorId, expiresAt))),
    takeChallenge: async (tokenHash: string, now: number) => {
      const row = await writeTxAsync(db, () => takeChallenge.get(tokenHash));
      return row && row.expires_at > now ? row.operator_id : null;
    },
    peekChallenge: async (tokenHash: string, now: number) => peekChallenge.get(tokenHash, now)?.operator_id ?? null,
    createSession: async (s: NewOperatorSession) => void (await writeTxAsync(db, () => createSession.run(s.id, s.tokenHash, s.operatorId, s.createdAt, s.expiresAt, s.ip, s.userAgent))),
    sessionByHash: async (tokenHash: string, now: number, idleSince: number) => sessionByHash.get(tokenHash, now, idleSince) ?? null,
    touchSession: async (id: string, at: number) => void (await writeTxAsync(db, () => touch.run(id, at))),
    proveSession: async (id: string, at: number) => void (await writeTxAsync(db, () => prove.run(id, at))),
    endSession: async (id: string, at: number) => void (await writeTxAsync(db, () => end.run(id, at))),
    replaceBackupCodes: async (operatorId: string, hashes: string[], at: number) =>
      writeTxAsync(db, () => {
        dropCodes.run(operatorId);
        for (const h of hashes) addCode.run(h, operatorId, at);
      }),
    useBackupCode: async (operatorId: string, hash: string, at: number) => writeTxAsync(db, () => useCode.run(operatorId, hash, at).changes === 1),
    remainingBackupCodes: async (operatorId: string) => codesLeft.get(operatorId)!.n,
    sessionsOf: async (operatorId: string, now: number, idleSince: number) => sessionsOf.all(operatorId, now, idleSince),
    endSessionOf: async (operatorId: string, id: string, at: number) => writeTxAsync(db, () => endOf.run(operatorId, id, at).changes === 1),
    endOtherSessions: async (operatorId: string, keepId: string, at: number) => writeTxAsync(db, () => endOthers.run(operatorId, keepId, at).changes),
    purgeExpired: async (now: number, before: number) => {
      purgeChallenges.run(now);
      purgeSessions.run(before);
    },
    audit: async (e: OperatorAuditEntry, at: number) =>
      void audit.run(e.operatorId, e.operatorEmail, e.action, e.target, e.ip, e.userAgent, JSON.stringify(e.detail ?? {}), at),
    auditPage: async (limit: number, offset: number) => ({ rows: auditPage.all(limit, offset), total: auditCount.get()!.n }),
    organizations: async (q: string, limit: number, offset: number) => {
      const pattern = likePattern(q);
      return { rows: organizations.all(q, pattern, limit, offset), total: organizationsCount.get(q, pattern)!.n };
    },
    organizationCounts: async () => organizationCounts.get()!,
    mailQueue: async (status: "pending" | "failed" | null, limit: number, offset: number) => ({
      rows: mailQueue.all(status, limit, offset),
      total: mailCount.get(status)!.n,
    }),
    retryMail: async (id: string, now: number) => writeTxAsync(db, () => retryMail.run(id, now).changes === 1),
    discardMail: async (id: string) => writeTxAsync(db, () => discardMail.run(id).changes === 1),
    jobs: async (limit: number, offset: number) => ({ rows: jobs.all(limit, offset), total: jobsCount.get()!.n }),
    runningJobs: async () => running.get()!.n,
    // One server process writes a SQLite file: this one, since it started.
    instances: async () => [{ name: `workspace-suite:${process.pid}`, address: null, connections: 1, since: Date.now() - Math.round(process.uptime() * 1000), mine: true }],
    sizes: async () => {
      const file = db.filename;
      let wal: number | null = null;
      if (file && file !== ":memory:") {
        try {
          wal = statSync(`${file}-wal`).size;
        } catch {
          wal = 0;
        }
      }
      return { database_bytes: pages.get()!.n, wal_bytes: wal };
    },
    backupSchedule: async () => getSetting.get(BACKUP_SCHEDULE_KEY)?.value ?? null,
    setBackupSchedule: async (json: string) => void (await writeTxAsync(db, () => putSetting.run(BACKUP_SCHEDULE_KEY, json))),
  };
  return store satisfies OperatorStore;
}
