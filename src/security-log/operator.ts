import type { AuditEntry } from "../security/repo";

/**
 * Audit rows of the server's operator, who acts through the command line (`suite user …`,
 * `suite tenant …`) and is nobody's account: no user id, the actor and the command in the
 * detail, and `suite-cli` where a request would leave its user agent. The security log shows
 * such rows as "Command line".
 */
export const OPERATOR_AGENT = "suite-cli";

export interface OperatorCommand {
  /** The command as typed, without secrets: `user reset-password`. */
  command: string;
  /** Done in the operator's console (src/operator), not on the command line. */
  console?: boolean;
}

/** The user agent of the operator console's rows in an organization's log. */
export const CONSOLE_AGENT = "suite-operator-console";

export const operatorEntry = (
  tenantId: string,
  action: string,
  by: OperatorCommand,
  detail: Record<string, unknown> = {},
): AuditEntry => ({
  tenantId,
  userId: null,
  action,
  ip: null,
  userAgent: by.console ? CONSOLE_AGENT : OPERATOR_AGENT,
  // The organization sees that the server's operator acted, not which operator.
  detail: by.console ? { actor: "operator", ...detail } : { actor: "cli", command: `suite ${by.command}`, ...detail },
});
