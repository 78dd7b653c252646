import { type Attempt, type Sent, req } from "./attempt-kit";
import type { World } from "./world";

/**
 * The operator console (/api/v1/operator, src/operator) is no organization's: it lists every
 * organization, mail and job. An organization's admin reaches for it with their own token, on
 * the base domain (401: an organization's token is no operator's) and on their own host (404:
 * the console does not exist there). Crossed subdomains do not apply (tenant-isolation.test.ts
 * leaves these operations out of that part, saying why); tests/operator/ covers the operator's side.
 */
const OPS: Array<[method: string, path: string, sent: string]> = [
  ["GET", "/api/v1/operator/organizations", "/operator/organizations?q=alpha"],
  ["POST", "/api/v1/operator/organizations/{subdomain}/disable", "/operator/organizations/alpha/disable"],
  ["POST", "/api/v1/operator/organizations/{subdomain}/enable", "/operator/organizations/alpha/enable"],
  ["DELETE", "/api/v1/operator/organizations/{id}", "/operator/organizations/{A}"],
  ["GET", "/api/v1/operator/exports/{token}", `/operator/exports/${"no-such-export".padEnd(43, "z")}`],
  ["GET", "/api/v1/operator/mail", "/operator/mail"],
  ["POST", "/api/v1/operator/mail/test", "/operator/mail/test"],
  ["POST", "/api/v1/operator/mail/{id}/retry", "/operator/mail/x/retry"],
  ["DELETE", "/api/v1/operator/mail/{id}", "/operator/mail/x"],
  ["GET", "/api/v1/operator/jobs", "/operator/jobs"],
  ["GET", "/api/v1/operator/backups", "/operator/backups"],
  ["POST", "/api/v1/operator/backups", "/operator/backups"],
  ["PUT", "/api/v1/operator/backups/schedule", "/operator/backups/schedule"],
  ["POST", "/api/v1/operator/backups/{name}/link", "/operator/backups/suite-x.db/link"],
  ["DELETE", "/api/v1/operator/backups/{name}", "/operator/backups/suite-x.db"],
  ["GET", "/api/v1/operator/backup-downloads/{token}", `/operator/backup-downloads/${"no-such-link".padEnd(43, "z")}`],
  ["GET", "/api/v1/operator/audit", "/operator/audit"],
  ["GET", "/api/v1/operator/auth/sessions", "/operator/auth/sessions"],
  ["POST", "/api/v1/operator/auth/backup-codes", "/operator/auth/backup-codes"],
  ["POST", "/api/v1/operator/auth/sessions/revoke-others", "/operator/auth/sessions/revoke-others"],
  ["DELETE", "/api/v1/operator/auth/sessions/{id}", "/operator/auth/sessions/x"],
  ["POST", "/api/v1/operator/auth/login", "/operator/auth/login"],
  ["POST", "/api/v1/operator/auth/2fa/verify", "/operator/auth/2fa/verify"],
];

/** `{A}` is organization A's id: deleting it is the attempt (with its subdomain typed, as the console sends it). */
const send = (w: World, method: string, template: string, o: Sent["o"]): Sent => {
  const path = template.replace("{A}", w.a.tenantId);
  if (template.includes("{A}")) return req(method, path, { body: { subdomain: "alpha" }, ...o });
  return req(method, path, method === "GET" || method === "DELETE" ? o : { body: {}, ...o });
};
const isSignIn = (path: string) => path.endsWith("/auth/login") || path.endsWith("/auth/2fa/verify");

export const OPERATOR_ATTEMPTS: Attempt[] = OPS.flatMap(([method, op, path]): Attempt[] => [
  {
    op: `${method} ${op}`,
    what: "B's admin's token on the base domain",
    send: (w: World) => send(w, method, path, { token: w.b.admin.access }),
    // The sign-in steps take no token: an empty body is a 422 before any lookup.
    expect: isSignIn(path) ? { status: 422, type: "missing" } : { status: 401, code: "not_authenticated" },
  },
  {
    op: `${method} ${op}`,
    what: "B's admin's token on B's own host",
    send: (w: World) => send(w, method, path, { token: w.b.admin.access, tenant: "bravo" }),
    expect: { status: 404, code: "not_found" },
  },
]);
