/**
 * What the password mails say about the other ways into the account (issue 29.3): a linked outside
 * identity survives a password change, so a person changing or resetting a password after a
 * break-in must see which identities can still sign in as them, and where to remove one.
 */
import type { Config } from "../../config";
import { organizationUrl } from "../../mail/links";
import type { OutgoingMail } from "../../mail/repo";
import { renderMail } from "../../mail/render";

/** A linked identity as a mail names it: the provider's name and the outside account's address. */
export interface LinkedIdentity {
  provider_name: string;
  email: string | null;
}

const oneLine = (s: string) => s.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();

/** Where a member reviews and unlinks identities: My account in their workspace. */
export const reviewUrl = (config: Config, subdomain: string): string => organizationUrl(config, subdomain, "/settings").toString();

/** The paragraphs naming the linked identities, with the address to review them. */
export function linkedIdentitiesParagraphs(config: Config, subdomain: string, identities: LinkedIdentity[]): string[] {
  const review = reviewUrl(config, subdomain);
  if (identities.length === 0) return [`No outside account (Google, Microsoft, GitHub or another provider) is linked to sign in as you. Review how you sign in: ${review}`];
  const names = identities.map((i) => (i.email ? `${oneLine(i.provider_name)} (${oneLine(i.email)})` : oneLine(i.provider_name)));
  return [
    `These outside accounts are linked and can sign in as you without your password: ${names.join("; ")}.`,
    `If you do not recognise one of them, unlink it now: ${review}`,
  ];
}

/** The notice after a password was changed or reset: no secret in it, so no link to note. */
export function passwordChangedMail(
  config: Config,
  o: { tenantId: string; tenantName: string; subdomain: string; recipient: string; how: "changed" | "reset"; sessionsEnded: number },
  identities: LinkedIdentity[],
): OutgoingMail {
  const org = oneLine(o.tenantName);
  const content = renderMail({
    subject: `Your password for ${org} was ${o.how === "reset" ? "reset" : "changed"}`,
    heading: `Your password was ${o.how === "reset" ? "reset" : "changed"}`,
    paragraphs: [
      `The password of ${o.recipient} in ${org} (${o.subdomain}) was just ${o.how === "reset" ? "reset through a mailed link" : "changed"}.` +
        (o.sessionsEnded > 0 ? ` ${o.sessionsEnded} other session${o.sessionsEnded === 1 ? " was" : "s were"} signed out.` : ""),
      ...linkedIdentitiesParagraphs(config, o.subdomain, identities),
      "If you did not do this, reset your password at once from the sign-in page and tell your workspace's admin.",
    ],
    action: { label: "Review how you sign in", url: reviewUrl(config, o.subdomain) },
    footer: "You get this mail whenever your password changes.",
  });
  return { tenantId: o.tenantId, kind: "password_changed", recipient: o.recipient, ...content, link: null };
}
