import type { Config } from "../config";

/**
 * The address a mailed link opens: SUITE_PUBLIC_URL with the tenant's subdomain in front of its
 * host (http://localhost:8000 → http://acme.localhost:8000), so the browser lands on the right
 * workspace. The token rides in the fragment, which browsers never send to a server or to a
 * Referer, so it cannot reach an access log on the way.
 */
export function mailLink(config: Config, subdomain: string, path: string, token: string): string {
  const url = organizationUrl(config, subdomain, path);
  url.hash = `token=${encodeURIComponent(token)}`;
  return url.toString();
}

/** An organization's public address of `path` (also the redirect URI identity providers call back). */
export function organizationUrl(config: Config, subdomain: string, path: string): URL {
  const url = new URL(config.publicUrl);
  url.pathname = path;
  url.search = "";
  // An IP address has no subdomains: the workspace is named in the query instead.
  if (isIpHost(url.hostname)) url.searchParams.set("tenant", subdomain);
  else url.hostname = `${subdomain}.${url.hostname}`;
  return url;
}

const isIpHost = (host: string) => /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.startsWith("[");
