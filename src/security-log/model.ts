import { t, type Static } from "elysia";
import { toIso } from "../kernel/ids";
import { pageSchema } from "../http/page-schema";
import type { AuditLogRow } from "./repo";

/** One row of the audit log as the API answers it. Never a secret: the writers never store one. */
export const AuditLogEntry = t.Object(
  {
    id: t.Integer(),
    user_id: t.Nullable(t.String({ description: "Who acted (or was acted on, for a failed sign-in)" })),
    user_email: t.Nullable(t.String({ description: "Their address, while the user exists" })),
    user_name: t.Nullable(t.String()),
    action: t.String({ description: "What happened: `auth.login`, `crm.stage_deleted`…" }),
    created_at: t.String({ format: "date-time" }),
    ip: t.Nullable(t.String()),
    user_agent: t.Nullable(t.String()),
    detail: t.Nullable(t.Record(t.String(), t.Any())),
  },
  { title: "AuditLogEntry" },
);

export type AuditLogEntry = Static<typeof AuditLogEntry>;
export const AuditLogPage = pageSchema(AuditLogEntry);
export type AuditLogPage = Static<typeof AuditLogPage>;

export const toAuditLogEntry = (r: AuditLogRow): AuditLogEntry => ({
  id: r.id,
  user_id: r.user_id,
  user_email: r.user_email,
  user_name: r.user_name,
  action: r.action,
  created_at: toIso(r.created_at),
  ip: r.ip,
  user_agent: r.user_agent,
  detail: r.detail === null ? null : (JSON.parse(r.detail) as Record<string, unknown>),
});

/** The CSV's columns, in order; detail is its JSON text. */
export const CSV_HEADER = ["id", "created_at", "user_id", "user_email", "user_name", "action", "ip", "user_agent", "detail"];
export const csvCells = (r: AuditLogRow) => [r.id, toIso(r.created_at), r.user_id, r.user_email, r.user_name, r.action, r.ip, r.user_agent, r.detail];
