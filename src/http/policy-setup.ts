import type { Principal } from "../kernel/principal";
import { errors } from "../kernel/errors";

/**
 * What a member who does not comply with the organization's sign-in policy may still do: see who
 * they are, set up a passkey or 2FA (with the step-up that needs), read the policy, and look at or
 * end their sessions. Everything else answers 403 policy_setup_required until they comply.
 * Listed by method and path (the guard covers whole plugins, and these sit among others).
 */
const ALLOWED = new Set([
  "GET /api/v1/auth/me",
  "POST /api/v1/auth/reauthenticate",
  "GET /api/v1/auth/sessions",
  "POST /api/v1/auth/sessions/revoke",
  "POST /api/v1/auth/sessions/revoke-others",
  "POST /api/v1/auth/logout",
  "POST /api/v1/auth/logout-all",
  "GET /api/v1/auth/2fa/status",
  "POST /api/v1/auth/2fa/setup",
  "POST /api/v1/auth/2fa/confirm",
  "GET /api/v1/auth/passkeys",
  "POST /api/v1/auth/passkeys/register/options",
  "POST /api/v1/auth/passkeys/register/verify",
  "GET /api/v1/tenant",
]);

/** 403 policy_setup_required unless the caller complies or the operation is one that lets them comply. */
export function checkPolicySetup(p: Principal, method: string, path: string): void {
  if (p.policySetup === undefined) return;
  const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
  const m = method === "HEAD" ? "GET" : method;
  if (!ALLOWED.has(`${m} ${trimmed}`)) throw errors.policySetupRequired(p.policySetup);
}
