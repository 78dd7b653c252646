import { errors } from "../kernel/errors";

/** Names that stand for the product itself, never for an organization (organization/model.ts refuses them at signup). */
export const RESERVED_SUBDOMAINS = new Set(["www", "api", "app", "admin", "mail", "static"]);

/**
 * A request's headers: Elysia's `headers` record (lower-case names) or the request's own Headers.
 * Hot paths read the few they need from the Headers, so the framework never copies them all.
 */
export type HeaderSource = Headers | Record<string, string | undefined>;

/** One header's value from either form. */
export const headerOf = (headers: HeaderSource, name: string): string | undefined =>
  headers instanceof Headers ? (headers.get(name) ?? undefined) : headers[name];

/**
 * The host name of a Host header (or of an Origin's host), without port or IPv6 brackets,
 * lower-cased, and without the trailing dot of a fully qualified name: `acme.example.com.` is
 * the same host as `acme.example.com` (DNS resolves both alike).
 */
export function hostName(host: string): string {
  const h = host.trim().toLowerCase();
  const v6 = /^\[([^\]]*)\](?::\d*)?$/.exec(h);
  if (v6) return v6[1]!;
  // A bare IPv6 address (no brackets) has no port to take off.
  const name = h.indexOf(":") === h.lastIndexOf(":") ? h.replace(/:\d*$/, "") : h;
  return name.endsWith(".") ? name.slice(0, -1) : name;
}

/**
 * The subdomain a request names, by its Host (`acme.<base domain>`) or, for API clients, by the
 * `X-Tenant` header; null when it names none. Naming two different tenants is refused.
 */
export function requestedSubdomain(headers: HeaderSource, baseDomain: string): string | null {
  const header = headerOf(headers, "x-tenant")?.trim().toLowerCase() || null;
  const host = hostName(headerOf(headers, "host") ?? "");
  let fromHost: string | null = null;
  if (host.endsWith(`.${baseDomain}`)) {
    const sub = host.slice(0, -(baseDomain.length + 1));
    // www.<base>, api.<base>: the product's own hosts, which name no organization.
    if (!RESERVED_SUBDOMAINS.has(sub)) fromHost = sub;
  }
  if (header && fromHost && header !== fromHost) throw errors.tenantMismatch();
  return header ?? fromHost;
}

/**
 * The id of the tenant a request names (Host or X-Tenant), or null when it names none. An unknown
 * subdomain is 404 `tenant_not_found`: subdomains are public, so this reveals nothing. A disabled
 * one is 403 `tenant_disabled`: the row is read from the database on every call (no cache), so
 * `suite tenant disable`, another process, is seen by the next request.
 */
export async function namedTenantId(
  headers: HeaderSource,
  baseDomain: string,
  bySubdomain: (subdomain: string) => Promise<{ id: string; disabled_at?: number | null } | null | undefined>,
): Promise<string | null> {
  const sub = requestedSubdomain(headers, baseDomain);
  if (sub === null) return null;
  const tenant = await bySubdomain(sub);
  if (!tenant) throw errors.tenantNotFound();
  if (tenant.disabled_at != null) throw errors.tenantDisabled();
  return tenant.id;
}
