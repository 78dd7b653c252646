import type { AuditEntry } from "../security/repo";
import type { RequestInfo } from "./service";

/** The one builder of the sign-in audit rows: who, what, from where. */
export const auditEntry = (
  action: string,
  who: { tenantId: string | null; userId: string | null },
  req: RequestInfo,
  detail?: Record<string, unknown>,
): AuditEntry => ({ ...who, action, ip: req.ip, userAgent: req.userAgent, detail });
