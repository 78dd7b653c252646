/**
 * The security log's state lives in the URL under the API's own parameter names (user_id,
 * action…, since, until, page, size), so a link, a reload or the back button gives the same view.
 * Times are ISO 8601 in UTC in the URL; the date-time inputs show them in the viewer's time zone.
 */
import type { AuditQuery } from "../api/client";

export interface LogView {
  userId: string;
  actions: string[];
  since: string;
  until: string;
  page: number;
  size: number;
}

export const PAGE_SIZES = [20, 50, 100];

const intIn = (raw: string | null, fallback: number, min: number, max: number): number => {
  const n = raw === null ? NaN : Number(raw);
  return Number.isInteger(n) && n >= min && n <= max ? n : fallback;
};
/** An unreadable time in a hand-edited URL is dropped rather than shown as the server's 422. */
const isoOrEmpty = (raw: string | null): string => (raw && !Number.isNaN(Date.parse(raw)) ? new Date(raw).toISOString() : "");

export function parseLogView(q: URLSearchParams): LogView {
  return {
    userId: (q.get("user_id") ?? "").slice(0, 64),
    actions: [...new Set(q.getAll("action").filter(Boolean))],
    since: isoOrEmpty(q.get("since")),
    until: isoOrEmpty(q.get("until")),
    page: intIn(q.get("page"), 1, 1, 1_000_000_000),
    size: intIn(q.get("size"), 20, 1, 100),
  };
}

/** The view → URL parameters (defaults omitted; null removes one). */
export function logParams(v: LogView): Record<string, string | string[] | null> {
  return {
    user_id: v.userId || null,
    action: v.actions,
    since: v.since || null,
    until: v.until || null,
    page: v.page > 1 ? String(v.page) : null,
    size: v.size !== 20 ? String(v.size) : null,
  };
}

/** The view → the API's query (the CSV link takes the same, without paging). */
export function logQuery(v: LogView): AuditQuery {
  return {
    user_id: v.userId || undefined,
    action: v.actions.length ? v.actions : undefined,
    since: v.since || undefined,
    until: v.until || undefined,
    page: v.page,
    size: v.size,
  };
}

const pad = (n: number) => String(n).padStart(2, "0");
/** ISO (UTC) → the value of an <input type="datetime-local">, in the viewer's time zone. */
export function toLocalInput(iso: string): string {
  if (!iso) return "";
  const d = new Date(iso);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
/** The input's local date-time → ISO in UTC; "" stays "". */
export function fromLocalInput(value: string): string {
  if (!value) return "";
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? "" : d.toISOString();
}

/** The actions the server writes, by group, for the action filter; a URL may name others. */
export const KNOWN_ACTIONS: Array<[group: string, actions: string[]]> = [
  ["Sign-in", ["login.success", "login.failure", "login.locked", "reauth.success", "reauth.failure", "magic_link.requested", "magic_link.invalid", "login.new_device", "login.not_me", "login.not_me_invalid"]],
  ["Identity providers", ["oauth.joined", "oauth.failure", "identity.linked", "identity.unlinked"]],
  ["Password", ["password.changed", "password.change_failure", "password.reset_requested", "password.reset", "password.reset_invalid"]],
  ["Email address", ["email.verification_sent", "email.verified", "email.verification_invalid"]],
  ["Sessions", ["session.revoke", "session.revoke_others", "session.logout_all", "session.refresh_reuse"]],
  ["Second factor", ["2fa.setup", "2fa.enabled", "2fa.disabled", "2fa.challenge", "2fa.failure", "2fa.locked", "2fa.backup_code_used", "2fa.backup_codes_regenerated"]],
  ["Team", ["tenant.signup", "invitation.created", "invitation.resent", "invitation.revoked", "invitation.link_copied", "invitation.accepted", "user.renamed"]],
  // Written by admins in the app and by the server's operator on the command line (`suite user …`).
  ["Members", ["user.role_changed", "user.profile_changed", "user.removed", "user.2fa_reset", "user.unlocked", "user.password_set"]],
  ["Organization", ["tenant.renamed", "tenant.modules_changed", "tenant.sign_in_policy_changed", "tenant.disabled", "tenant.enabled"]],
  ["CRM", ["crm.stage_updated", "crm.stages_reordered", "crm.stage_deleted", "crm.import", "crm.deals_bulk", "crm.deals_bulk_undone"]],
];

/** What the "Who" column shows for a row's actor, or null for nobody known (a failed sign-in of an unknown address). */
export function actorLabel(r: { user_id: string | null; user_email: string | null; user_name: string | null; detail: Record<string, unknown> | null }): string | null {
  // The server's operator acts through `suite user …` / `suite tenant …`, as no account (src/security-log/operator.ts).
  if (r.detail?.actor === "cli") return "Command line";
  if (r.detail?.actor === "operator") return "Server operator";
  return r.user_name || r.user_email || (r.user_id ? "Former member" : null);
}

/** The Device column: the operator's rows came from the command line, not from a browser. */
export const deviceLabel = (r: { user_agent: string | null; detail: Record<string, unknown> | null }, device: (ua: string | null) => string): string =>
  r.detail?.actor === "cli" ? "Command line (suite)" : r.detail?.actor === "operator" ? "Operator console" : device(r.user_agent);
