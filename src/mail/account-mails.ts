import type { Config } from "../config";
import { mailLink } from "./links";
import type { OutgoingMail } from "./repo";
import { renderMail } from "./render";

/** Names typed by users go into a subject line: no line breaks or control characters there. */
const oneLine = (s: string) => s.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();

/** Who the mail is for: the account, its workspace, and the token its one link carries. */
export interface AccountMailTarget {
  tenantId: string;
  tenantName: string;
  subdomain: string;
  recipient: string;
  token: string;
  /** Paragraphs after the request's own (the reset mail: the account's linked identities). */
  extra?: string[];
}

const duration = (ms: number) => {
  const minutes = Math.round(ms / 60_000);
  if (minutes % 60 !== 0) return `${minutes} minute${minutes === 1 ? "" : "s"}`;
  const hours = minutes / 60;
  return `${hours} hour${hours === 1 ? "" : "s"}`;
};

/** The password-reset mail: a link to /reset-password, the token in its fragment. */
export function passwordResetMail(config: Config, o: AccountMailTarget, ttlMs: number): OutgoingMail {
  const link = mailLink(config, o.subdomain, "/reset-password", o.token);
  const org = oneLine(o.tenantName);
  const content = renderMail({
    subject: `Reset your password for ${org}`,
    heading: `Reset your password for ${org}`,
    paragraphs: [
      `Someone, probably you, asked to reset the password of ${o.recipient} in ${org} (${o.subdomain}).`,
      "If it was not you, ignore this mail: your password stays as it is.",
      ...(o.extra ?? []),
    ],
    action: { label: "Choose a new password", url: link },
    footer: `The link works once, for ${duration(ttlMs)}. Choosing a new password signs you out everywhere.`,
  });
  return { tenantId: o.tenantId, kind: "password_reset", recipient: o.recipient, ...content, link };
}

/** The address-verification mail: a link to /verify-email, the token in its fragment. */
export function verifyEmailMail(config: Config, o: AccountMailTarget, ttlMs: number): OutgoingMail {
  const link = mailLink(config, o.subdomain, "/verify-email", o.token);
  const org = oneLine(o.tenantName);
  const content = renderMail({
    subject: `Confirm your email address for ${org}`,
    heading: "Confirm your email address",
    paragraphs: [`Open the link below to confirm that ${o.recipient} is your address in ${org} (${o.subdomain}).`, "If you did not sign up, ignore this mail."],
    action: { label: "Confirm my address", url: link },
    footer: `The link works once, for ${duration(ttlMs)}.`,
  });
  return { tenantId: o.tenantId, kind: "email_verification", recipient: o.recipient, ...content, link };
}
