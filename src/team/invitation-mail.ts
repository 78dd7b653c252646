import type { Config } from "../config";
import { mailLink } from "../mail/links";
import type { OutgoingMail } from "../mail/repo";
import { renderMail } from "../mail/render";

/** Names typed by users go into a subject line: no line breaks or control characters there. */
const oneLine = (s: string) => s.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();

/** The invitation mail: who invites, to which organization, and the one link that accepts. */
export function invitationMail(
  config: Config,
  o: { tenantId: string; tenantName: string; subdomain: string; recipient: string; inviter: string; token: string; expiresAt: number },
): OutgoingMail {
  const link = mailLink(config, o.subdomain, "/accept-invitation", o.token);
  const org = oneLine(o.tenantName);
  const content = renderMail({
    subject: `You are invited to join ${org}`,
    heading: `Join ${org}`,
    paragraphs: [`${oneLine(o.inviter)} invited you to join ${org} on Workspace Suite.`, "Open the link below to choose your password and sign in."],
    action: { label: "Accept the invitation", url: link },
    footer: `The link works once, until ${new Date(o.expiresAt).toUTCString()}. If you did not expect this invitation, ignore this mail.`,
  });
  return { tenantId: o.tenantId, kind: "invitation", recipient: o.recipient, ...content, link };
}
