import type { KnownDeviceRow, NewDeviceStore, SignInNoticeRow } from "../../auth/new-device/repo";
import type { OutgoingMail } from "../../mail/repo";
import type { AuditEntry } from "../../security/repo";
import { lockUserInTx } from "./account-tokens";
import type { Pg, PgQueries } from "./database";
import type { PgEnqueueInTx } from "./mail";
import type { PgAuditInTx } from "./sessions";

const DEVICE_COLS = "tenant_id, user_id, device_hash, kind, noticed_at, last_seen_at";
const NOTICE_COLS = "tenant_id, token_hash, user_id, session_id, session_created_at, created_at, expires_at, used_at";

/** Known devices and sign-in notices on PostgreSQL: the same functions as the SQLite store. */
export function createPostgresNewDeviceStore(pg: Pg, others: { security: PgAuditInTx; mail: PgEnqueueInTx }) {
  const rememberInTx = async (tx: PgQueries, d: KnownDeviceRow): Promise<void> => {
    await tx.run`INSERT INTO known_devices (tenant_id, user_id, device_hash, kind, noticed_at, last_seen_at)
      VALUES (${d.tenant_id}, ${d.user_id}, ${d.device_hash}, ${d.kind}, ${d.noticed_at}, ${d.last_seen_at})
      ON CONFLICT (tenant_id, user_id, device_hash) DO UPDATE
      SET noticed_at = greatest(known_devices.noticed_at, excluded.noticed_at), last_seen_at = excluded.last_seen_at`;
  };

  const store = {
    known: async (tenantId: string, userId: string, deviceHash: string): Promise<KnownDeviceRow | null> =>
      (await pg.unsafe<KnownDeviceRow>(`SELECT ${DEVICE_COLS} FROM known_devices WHERE tenant_id = $1 AND user_id = $2 AND device_hash = $3`, [tenantId, userId, deviceHash]))[0] ?? null,
    remember: async (d: KnownDeviceRow): Promise<void> => rememberInTx(pg, d),
    notice: async (devices: KnownDeviceRow[], n: Omit<SignInNoticeRow, "used_at">, mail: OutgoingMail, audit: AuditEntry, now: number): Promise<void> =>
      pg.begin(async (tx) => {
        for (const d of devices) await rememberInTx(tx, d);
        await tx.run`INSERT INTO sign_in_notices (tenant_id, token_hash, user_id, session_id, session_created_at, created_at, expires_at)
          VALUES (${n.tenant_id}, ${n.token_hash}, ${n.user_id}, ${n.session_id}, ${n.session_created_at}, ${n.created_at}, ${n.expires_at})`;
        const mailId = await others.mail.enqueueInTx(tx, mail, now);
        await others.security.auditInTx(tx, { ...audit, detail: { mail_id: mailId, ...audit.detail } }, now);
      }),
    /**
     * Single use across instances: a second UPDATE waits for the first, then finds used_at set.
     * The user's row is locked first, then the challenges deleted before the sessions are revoked,
     * the order every revoking transaction of a user keeps (sessions.ts): no deadlock with them.
     */
    notMe: async (tenantId: string, tokenHash: string, now: number, entry: (row: SignInNoticeRow, ended: number) => AuditEntry) =>
      pg.begin(async (tx) => {
        const owner = await tx.one<{ user_id: string }>`SELECT user_id FROM sign_in_notices WHERE tenant_id = ${tenantId} AND token_hash = ${tokenHash}`;
        if (!owner) return null;
        await lockUserInTx(tx, tenantId, owner.user_id);
        const [spent] = await tx.unsafe<SignInNoticeRow>(
          `UPDATE sign_in_notices SET used_at = $3 WHERE tenant_id = $1 AND token_hash = $2 AND used_at IS NULL AND expires_at > $3 RETURNING ${NOTICE_COLS}`,
          [tenantId, tokenHash, now],
        );
        if (!spent) return null;
        const row: SignInNoticeRow = { ...spent };
        await tx.run`DELETE FROM sign_in_challenges WHERE tenant_id = ${row.tenant_id} AND user_id = ${row.user_id}`;
        const ended = await tx.run`UPDATE sessions SET revoked_at = ${now}, revoke_reason = 'not_me'
          WHERE tenant_id = ${row.tenant_id} AND user_id = ${row.user_id} AND revoked_at IS NULL
            AND (id = ${row.session_id} OR created_at >= ${row.session_created_at})`;
        await others.security.auditInTx(tx, entry(row, ended), now);
        return { row, ended };
      }),
    purgeExpired: async (noticesBefore: number, devicesBefore: number): Promise<number> =>
      (await pg.run`DELETE FROM sign_in_notices WHERE expires_at < ${noticesBefore}`) + (await pg.run`DELETE FROM known_devices WHERE last_seen_at < ${devicesBefore}`),
  };
  return store satisfies NewDeviceStore;
}
