/**
 * What the server tells the page in <meta name="suite-config"> (no inline script under the CSP):
 * the base domain, whether session cookies are shared by every subdomain, and whether mail
 * leaves by SMTP or waits in the outbox, and whether public signup is open (SUITE_SIGNUP).
 */
export interface SuiteConfig {
  baseDomain: string;
  sharedCookies: boolean;
  smtp: boolean;
  signup: "open" | "closed";
}

let cached: SuiteConfig | undefined;

export function config(): SuiteConfig {
  if (cached) return cached;
  const raw = document.querySelector('meta[name="suite-config"]')?.getAttribute("content");
  let parsed: Partial<SuiteConfig> = {};
  try {
    parsed = raw ? JSON.parse(raw) : {};
  } catch {
    /* a page without the server's meta (component tests) */
  }
  cached = { baseDomain: parsed.baseDomain ?? "localhost", sharedCookies: parsed.sharedCookies ?? false, smtp: parsed.smtp ?? false, signup: parsed.signup === "closed" ? "closed" : "open" };
  return cached;
}

/** The organization's subdomain this page is on, or null on the base domain (the public page). */
export function currentSubdomain(host = location.hostname): string | null {
  const base = config().baseDomain;
  if (!host.endsWith(`.${base}`)) return null;
  const sub = host.slice(0, -(base.length + 1));
  return ["www", "api", "app", "admin", "mail", "static"].includes(sub) ? null : sub;
}

/** The origin of an organization's host, same scheme and port as this page. */
export function workspaceOrigin(subdomain: string): string {
  const port = location.port ? `:${location.port}` : "";
  return `${location.protocol}//${subdomain}.${config().baseDomain}${port}`;
}

/** For tests. */
export function setConfig(c: SuiteConfig | undefined): void {
  cached = c;
}
