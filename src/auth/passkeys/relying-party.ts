import type { Config } from "../../config";
import { organizationUrl } from "../../mail/links";

const isIp = (host: string) => /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(":") || host.startsWith("[");

/**
 * The relying party (RP ID) of a request on an organization's host (`subdomain`) or on the base
 * domain (null): normally the base domain, so that one passkey works on the organization's host
 * and on the base domain alike. Browsers refuse the RP ID `localhost` on `acme.localhost` (not a
 * registrable suffix of it), so with the default base domain each organization's host is its own
 * RP and the base domain `localhost` has none (null); nor has an IP address (docs/decisions.md).
 */
export function rpIdFor(config: Config, subdomain: string | null): string | null {
  const base = config.baseDomain.toLowerCase();
  if (isIp(base) || isIp(new URL(config.publicUrl).hostname)) return null;
  if (base !== "localhost") return base;
  return subdomain === null ? null : `${subdomain}.${base}`;
}

/** The pages that may use an organization's passkeys: its own host's origin and the base domain's (SUITE_PUBLIC_URL). */
export const originsFor = (config: Config, subdomain: string): string[] => [
  organizationUrl(config, subdomain, "/").origin,
  new URL(config.publicUrl).origin,
];
