import type { Config } from "../config";
import { RESERVED_SUBDOMAINS } from "../http/tenancy";
import type { TenantsStore } from "../organization/repo";

export interface TlsAskDeps {
  config: Config;
  tenants: TenantsStore;
}

/**
 * Caddy's on-demand TLS asks before it requests a certificate for a name: only the base domain
 * and the host of an existing, enabled organization get one, so that random subdomains cannot
 * use up the certificate authority's limits for the domain.
 */
export function createTlsAskService(d: TlsAskDeps) {
  const base = d.config.baseDomain;

  async function certificateAllowed(domain: string): Promise<boolean> {
    // A bare name, as Caddy asks it (no port: `acme.example.com:443` is no name of ours).
    const host = domain.trim().toLowerCase().replace(/\.$/, "");
    if (host === base) return true;
    if (!host.endsWith(`.${base}`)) return false;
    const sub = host.slice(0, -(base.length + 1));
    // One DNS label, as a subdomain is; www, api and the like name no organization.
    if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(sub) || RESERVED_SUBDOMAINS.has(sub)) return false;
    const tenant = await d.tenants.bySubdomain(sub);
    return tenant != null && tenant.disabled_at == null;
  }

  /**
   * Whether the caller may ask: a process on this machine talking to the server directly (Caddy
   * beside it), never a request that came through the proxy, which always carries a forwarding
   * header. Anyone else would learn which organizations exist, one name at a time.
   */
  function callerMayAsk(peer: string | null, headers: Headers): boolean {
    if (peer === null || !isLoopback(peer)) return false;
    return !headers.has("x-forwarded-for") && !headers.has("forwarded") && !headers.has("x-real-ip");
  }

  return { certificateAllowed, callerMayAsk };
}

const isLoopback = (address: string) => /^127\./.test(address) || address === "::1" || /^::ffff:127\./i.test(address);

export type TlsAskService = ReturnType<typeof createTlsAskService>;
