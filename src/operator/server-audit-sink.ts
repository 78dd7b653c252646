import type { ServerAudit } from "../organization/server-audit";
import type { OperatorStore } from "./repo";

/**
 * The server audit entries of a deletion (`tenant.deletion_started`, `tenant.deleted`) as rows of
 * the console's audit table: the command line's as `suite-cli` with no operator, the console's
 * under the operator's email. The export's folder is left out of the row: its name is the
 * export's one-time token, which every operator reading the Audit screen would otherwise hold
 * (the server's log line keeps it for the operator on the machine).
 */
export const serverAuditToOperatorAudit = (store: OperatorStore): ServerAudit => async (e) => {
  const cli = e.actor === "cli";
  const { export: _folder, ...detail } = e.detail;
  await store.audit(
    {
      operatorId: null,
      operatorEmail: cli ? null : e.actor,
      action: e.action,
      target: typeof e.detail.subdomain === "string" ? `organization:${e.detail.subdomain}` : null,
      ip: null,
      userAgent: cli ? "suite-cli" : null,
      detail: { actor: cli ? "cli" : "operator", ...(e.command ? { command: e.command } : {}), ...detail },
    },
    e.at,
  );
};
