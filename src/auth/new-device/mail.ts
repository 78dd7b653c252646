/**
 * The new-device mail: when, which browser and system, which IP, which way in, and the
 * "this wasn't me" link. Nothing in it lets its reader sign in; the link only ends sessions.
 */
import type { Config } from "../../config";
import { mailLink } from "../../mail/links";
import type { OutgoingMail } from "../../mail/repo";
import { renderMail } from "../../mail/render";
import { describeUserAgent } from "../../kernel/user-agent";

const oneLine = (s: string) => s.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();

/** The way in, in words: a session's method ("password+2fa", "magic_link", "oidc:Google", "passkey"). */
export function describeMethod(method: string): string {
  const [first, ...rest] = method.split("+");
  const base =
    first === "password" ? "password"
    : first === "magic_link" ? "a link mailed to you"
    : first === "passkey" ? "a passkey"
    : first?.startsWith("oidc:") ? `the identity provider ${oneLine(first.slice(5))}`
    : oneLine(first ?? method);
  return rest.includes("2fa") ? `${base} and a two-factor code` : base;
}

/** "27 November 2026 at 17:40 UTC": the mail's reader may be anywhere, so the zone is said. */
export const describeTime = (ms: number): string => {
  const d = new Date(ms);
  const date = d.toLocaleDateString("en-GB", { day: "numeric", month: "long", year: "numeric", timeZone: "UTC" });
  const time = d.toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", timeZone: "UTC" });
  return `${date} at ${time} UTC`;
};

export interface NewDeviceMailInput {
  tenantId: string;
  tenantName: string;
  subdomain: string;
  recipient: string;
  token: string;
  at: number;
  ip: string | null;
  userAgent: string | null;
  method: string;
  ttlMs: number;
}

export function newDeviceMail(config: Config, o: NewDeviceMailInput): OutgoingMail {
  const link = mailLink(config, o.subdomain, "/not-me", o.token);
  const org = oneLine(o.tenantName);
  const content = renderMail({
    subject: `New sign-in to ${org}`,
    heading: "New sign-in to your account",
    paragraphs: [
      `${o.recipient} signed in to ${org} (${o.subdomain}) from a device or browser not seen before.`,
      `When: ${describeTime(o.at)}. Browser and system: ${describeUserAgent(o.userAgent)}. IP address: ${o.ip ?? "unknown"}. Signed in with: ${describeMethod(o.method)}.`,
      "If this was you, there is nothing to do.",
      "If it was not you, open the link below: it signs that device out, along with every sign-in since, and mails you a link to choose a new password.",
    ],
    action: { label: "This wasn't me", url: link },
    footer: `The link works once, for ${Math.round(o.ttlMs / 86_400_000)} days. You get this mail whenever your account is signed in from a new device.`,
  });
  return { tenantId: o.tenantId, kind: "new_device", recipient: o.recipient, ...content, link };
}
