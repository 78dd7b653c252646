import type { KnownDeviceRow, NewDeviceStore, SignInNoticeRow } from "../../auth/new-device/repo";
import { type Db, writeTxAsync } from "../../db/database";
import type { OutgoingMail } from "../../mail/repo";
import type { AuditEntry } from "../../security/repo";
import type { SqliteMailStore } from "./mail";
import type { SqliteSecurityStore } from "./security";

/** SQL of known devices and sign-in notices (auth/new-device/). Every statement is prepared once. */
export function createSqliteNewDeviceStore(db: Db, others: { security: SqliteSecurityStore; mail: SqliteMailStore }) {
  const known = db.prepare<KnownDeviceRow, [string, string, string]>(
    "SELECT * FROM known_devices WHERE tenant_id = ?1 AND user_id = ?2 AND device_hash = ?3",
  );
  const remember = db.prepare<never, [string, string, string, string, number, number]>(
    `INSERT INTO known_devices (tenant_id, user_id, device_hash, kind, noticed_at, last_seen_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
     ON CONFLICT (tenant_id, user_id, device_hash) DO UPDATE SET noticed_at = max(noticed_at, excluded.noticed_at), last_seen_at = excluded.last_seen_at`,
  );
  const insertNotice = db.prepare<never, [string, string, string, string, number, number, number]>(
    `INSERT INTO sign_in_notices (tenant_id, token_hash, user_id, session_id, session_created_at, created_at, expires_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)`,
  );
  // Single use: of two concurrent redeems, exactly one sees a row come back.
  const spend = db.prepare<SignInNoticeRow, [string, string, number]>(
    "UPDATE sign_in_notices SET used_at = ?3 WHERE tenant_id = ?1 AND token_hash = ?2 AND used_at IS NULL AND expires_at > ?3 RETURNING *",
  );
  const endChallenges = db.prepare<never, [string, string]>("DELETE FROM sign_in_challenges WHERE tenant_id = ?1 AND user_id = ?2");
  const endSessions = db.prepare<never, [string, string, string, number, number]>(
    `UPDATE sessions SET revoked_at = ?5, revoke_reason = 'not_me'
     WHERE tenant_id = ?1 AND user_id = ?2 AND revoked_at IS NULL AND (id = ?3 OR created_at >= ?4)`,
  );
  const purgeNotices = db.prepare<never, [number]>("DELETE FROM sign_in_notices WHERE expires_at < ?1");
  const purgeDevices = db.prepare<never, [number]>("DELETE FROM known_devices WHERE last_seen_at < ?1");

  const rememberInTx = (d: KnownDeviceRow) => void remember.run(d.tenant_id, d.user_id, d.device_hash, d.kind, d.noticed_at, d.last_seen_at);

  const store = {
    known: async (tenantId: string, userId: string, deviceHash: string) => known.get(tenantId, userId, deviceHash),
    remember: async (d: KnownDeviceRow) => writeTxAsync(db, () => rememberInTx(d)),
    notice: async (devices: KnownDeviceRow[], n: Omit<SignInNoticeRow, "used_at">, mail: OutgoingMail, audit: AuditEntry, now: number) =>
      writeTxAsync(db, () => {
        for (const d of devices) rememberInTx(d);
        insertNotice.run(n.tenant_id, n.token_hash, n.user_id, n.session_id, n.session_created_at, n.created_at, n.expires_at);
        // Looked up on each call, not kept: tests wrap enqueueInTx to note mailed links as secrets.
        const mailId = others.mail.enqueueInTx(mail, now);
        others.security.auditInTx({ ...audit, detail: { mail_id: mailId, ...audit.detail } }, now);
      }),
    notMe: async (tenantId: string, tokenHash: string, now: number, entry: (row: SignInNoticeRow, ended: number) => AuditEntry) =>
      writeTxAsync(db, () => {
        const row = spend.get(tenantId, tokenHash, now);
        if (!row) return null;
        endChallenges.run(row.tenant_id, row.user_id);
        const ended = endSessions.run(row.tenant_id, row.user_id, row.session_id, row.session_created_at, now).changes;
        others.security.auditInTx(entry(row, ended), now);
        return { row, ended };
      }),
    purgeExpired: async (noticesBefore: number, devicesBefore: number) =>
      writeTxAsync(db, () => purgeNotices.run(noticesBefore).changes + purgeDevices.run(devicesBefore).changes),
  };
  return store satisfies NewDeviceStore;
}
