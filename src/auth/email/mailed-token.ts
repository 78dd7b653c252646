import type { Config } from "../../config";
import { hashToken, newTenantToken } from "../../kernel/ids";
import type { AccountMailTarget } from "../../mail/account-mails";
import type { OutgoingMail } from "../../mail/repo";
import type { Mailer } from "../../mail/sender";
import { auditEntry } from "../audit-entry";
import type { RequestInfo } from "../service";
import type { AccountTarget, AccountTokenPurpose, AccountTokensStore } from "./repo";

export interface MailedTokenDeps {
  config: Config;
  now: () => number;
  tokens: AccountTokensStore;
  mailer: Mailer;
}

/**
 * A mailed account token (password reset, address verification): a new random token, its hash
 * stored with its mail and its audit row in one commit, then the sender woken. Only the mail holds
 * the token itself.
 */
export async function issueMailedToken(
  d: MailedTokenDeps,
  target: AccountTarget,
  req: RequestInfo,
  kind: {
    purpose: AccountTokenPurpose;
    ttlMs: number;
    mail: (config: Config, to: AccountMailTarget, ttlMs: number) => OutgoingMail;
    action: string;
    detail?: Record<string, unknown>;
  },
): Promise<void> {
  const token = newTenantToken(target.tenant_id);
  const now = d.now();
  const to = { tenantId: target.tenant_id, tenantName: target.tenant_name, subdomain: target.subdomain, recipient: target.email, token };
  const mail = kind.mail(d.config, to, kind.ttlMs);
  await d.tokens.issue(
    { token_hash: hashToken(token), purpose: kind.purpose, tenant_id: target.tenant_id, user_id: target.id, email: target.email, expires_at: now + kind.ttlMs, created_at: now },
    mail,
    auditEntry(kind.action, { tenantId: target.tenant_id, userId: target.id }, req, kind.detail),
    now,
  );
  d.mailer.kick();
}
