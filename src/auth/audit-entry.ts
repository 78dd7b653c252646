import type { AuditEntry } from "../security/repo";
import type { RequestInfo } from "../kernel/principal";

/** The one builder of the sign-in audit rows: who, what, from where. */
export const auditEntry = (
  action: string,
  who: { tenantId: string | null; userId: string | null },
  req: RequestInfo,
  detail?: Record<string, unknown>,
): AuditEntry => ({ ...who, action, ip: req.ip, userAgent: req.userAgent, detail });

/**
 * The request as audit rows in an organization see it when the request did not name that
 * organization (sign-in, magic link or reset without a tenant; issue 29.1): no IP or user agent.
 * The caller may be a stranger who typed a member's address, and the organization may be a
 * throwaway workspace opened with someone else's address: its owner must not learn her IP.
 */
export const unnamedRequest = (req: RequestInfo, tenantNamed: boolean): RequestInfo => (tenantNamed ? req : { ip: null, userAgent: null });
