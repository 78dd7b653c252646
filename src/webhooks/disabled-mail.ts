import type { Config } from "../config";
import { organizationUrl } from "../mail/links";
import type { OutgoingMail } from "../mail/repo";
import { renderMail } from "../mail/render";

const oneLine = (s: string) => s.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();

/** The mail to each admin when the server disabled a webhook: why, and where to enable it again. */
export function webhookDisabledMail(
  config: Config,
  o: { tenantId: string; tenantName: string; subdomain: string; recipient: string; url: string; endpointId: string; reason: "gone" | "failing" },
): OutgoingMail {
  const org = oneLine(o.tenantName);
  const why =
    o.reason === "gone"
      ? "Its receiver answered 410 Gone, which asks the sender to stop."
      : "Its receiver has not accepted a delivery for three days, although each was retried.";
  const content = renderMail({
    subject: `A webhook of ${org} was disabled`,
    heading: "A webhook was disabled",
    paragraphs: [`The webhook to ${oneLine(o.url)} in ${org} (${o.subdomain}) no longer receives events. ${why}`, "Check the receiver, then enable the webhook again on the Webhooks page; its delivery log shows each answer."],
    action: { label: "Open the Webhooks page", url: organizationUrl(config, o.subdomain, "/organization/webhooks").href },
    footer: "You get this mail because you are an admin of this organization.",
  });
  // No link to keep sealed: the button opens a page that needs a sign-in.
  return { tenantId: o.tenantId, kind: "webhook_disabled", recipient: o.recipient, ...content, link: null };
}
