import type { AuthService, IssuedTokens, Principal, RequestInfo } from "../auth/service";
import type { AuditEntry } from "../security/repo";
import { isUniqueViolation } from "../kernel/unique-violation";
import { newId } from "../kernel/ids";
import { RequestValidationError, errors } from "../kernel/errors";
import { refuseCommonPassword } from "../security/common-passwords";
import type { PasswordHasher } from "../security/passwords";
import type { Limits, RateLimiter } from "../security/rate-limit";
import { type UserRead, normalizeEmail, toUserRead } from "../team/model";
import { DEFAULT_MODULES, type ModuleName, type TenantRead, type UpdateTenantBody, toTenantRead } from "./model";
import { createOperatorTenants } from "./operator";
import type { TenantRow, TenantsStore } from "./repo";

export interface SignupInput {
  email: string;
  password: string;
  tenant_name: string;
  subdomain: string;
  initial_modules?: string[];
  full_name?: string | null;
}

export interface TenantsDeps {
  now: () => number;
  tenants: TenantsStore;
  hasher: PasswordHasher;
  limiter: RateLimiter;
  limits: Limits;
  auth: AuthService;
  /** After the organization commits: mails its first admin the address-verification link (auth/email/). */
  afterSignup?: (tenantId: string, userId: string, req: RequestInfo) => Promise<void>;
}

export function createTenantsService(d: TenantsDeps) {
  /** Signup and `suite tenant create`: a new organization with its first admin, signed in. */
  async function createOrganization(
    input: SignupInput,
    req: RequestInfo,
    via: "signup" | "cli",
  ): Promise<{ tenant: TenantRead; user: UserRead; tokens: IssuedTokens }> {
    const subdomain = input.subdomain.trim().toLowerCase();
    if (via === "signup") {
      const limit = await d.limiter.hit(d.limits.signupPerIp, req.ip ?? "unknown");
      if (!limit.allowed) throw errors.rateLimited(limit.retryAfterSeconds);
    }
    // The command line checks its prompt's password itself (cli/admin.ts): the seed's demo
    // organizations are made here too, with a generated password.
    if (via === "signup") await refuseCommonPassword(input.password, { email: input.email, organizationName: input.tenant_name, subdomain });
    const taken = () => errors.conflict("subdomain_taken", "This subdomain is already taken.");
    if (await d.tenants.bySubdomain(subdomain)) throw taken();

    // The slow part happens before the transaction opens.
    const passwordHash = await d.hasher.hash(input.password);
    const now = d.now();
    const tenant: TenantRow = { id: newId(), name: input.tenant_name.trim(), subdomain, created_at: now };
    const modules = [...new Set(input.initial_modules ?? DEFAULT_MODULES)].sort();
    const admin = {
      id: newId(),
      email: normalizeEmail(input.email),
      full_name: input.full_name?.trim() || null,
      password_hash: passwordHash,
      created_at: now,
    };
    const session = d.auth.newSessionRow(via === "signup" ? "signup" : "cli", req);
    let adminProfileId: string;
    try {
      ({ adminProfileId } = await d.tenants.createOrganization({
        tenant,
        modules,
        admin,
        session,
        audit: { action: "tenant.signup", ip: req.ip, userAgent: req.userAgent, detail: { subdomain, via } },
      }));
    } catch (e) {
      if (isUniqueViolation(e, "tenants.subdomain")) throw taken();
      throw e;
    }
    const tokens = await d.auth.issue({ ...session, tenant_id: tenant.id, user_id: admin.id, refresh_gen: 0, rotated_at: null });
    await d.afterSignup?.(tenant.id, admin.id, req);
    const userRow = { ...admin, tenant_id: tenant.id, role: "admin" as const, profile_id: adminProfileId, updated_at: now };
    return { tenant: toTenantRead(tenant, modules), user: toUserRead(userRow), tokens };
  }

  async function read(tenantId: string): Promise<TenantRead> {
    const row = await d.tenants.byId(tenantId);
    if (!row) throw errors.notFound();
    return toTenantRead(row, await d.tenants.modules(tenantId));
  }

  /** 403 module_disabled unless the organization has `module`: the check behind every module's routes. */
  async function requireModule(tenantId: string, module: ModuleName): Promise<void> {
    if (!(await d.tenants.hasModule(tenantId, module))) throw errors.moduleDisabled(module);
  }

  /** PATCH /tenant (admins): the name, and which modules are on. */
  async function update(p: Principal, body: UpdateTenantBody, req: RequestInfo): Promise<TenantRead> {
    if (p.role !== "admin") throw errors.forbidden();
    const policy = { require_passkey_or_2fa: body.require_passkey_or_2fa, require_passkey_for_admins: body.require_passkey_for_admins };
    const policyGiven = policy.require_passkey_or_2fa !== undefined || policy.require_passkey_for_admins !== undefined;
    if (body.name === undefined && body.modules === undefined && !policyGiven) {
      throw new RequestValidationError([{ loc: ["body"], msg: "Value error, give at least one of name, modules, require_passkey_or_2fa, require_passkey_for_admins", type: "value_error" }]);
    }
    const name = body.name?.trim();
    if (name === "") throw new RequestValidationError([{ loc: ["body", "name"], msg: "String should have at least 1 character", type: "string_too_short", input: body.name, ctx: { min_length: 1 } }]);
    // Renaming the organization, turning modules on and off or changing the sign-in policy needs a recent proof (issue 29.3).
    d.auth.requireRecentProof(p);
    const entry = (action: string, detail: Record<string, unknown>): AuditEntry => ({ tenantId: p.tenantId, userId: p.userId, action, ip: req.ip, userAgent: req.userAgent, detail });
    const r = await d.tenants.update(p.tenantId, { name, modules: body.modules && [...new Set(body.modules)], ...(policyGiven ? { policy } : {}) }, d.now(), (before, after) => {
      const out: AuditEntry[] = [];
      if (before.row.name !== after.row.name) out.push(entry("tenant.renamed", { from: before.row.name, to: after.row.name }));
      const on = after.modules.filter((m) => !before.modules.includes(m));
      const off = before.modules.filter((m) => !after.modules.includes(m));
      if (on.length > 0 || off.length > 0) out.push(entry("tenant.modules_changed", { enabled: on, disabled: off, modules: after.modules }));
      const was = toTenantRead(before.row, before.modules);
      const is = toTenantRead(after.row, after.modules);
      if (was.require_passkey_or_2fa !== is.require_passkey_or_2fa || was.require_passkey_for_admins !== is.require_passkey_for_admins) {
        out.push(entry("tenant.sign_in_policy_changed", {
          require_passkey_or_2fa: is.require_passkey_or_2fa,
          require_passkey_for_admins: is.require_passkey_for_admins,
        }));
      }
      return out;
    });
    if (!r) throw errors.notFound();
    return toTenantRead(r.row, r.modules);
  }

  /** The tenant's row, or a 403 tenant_disabled when the operator disabled it (invitation accept, 2FA verify). */
  async function readInService(tenantId: string): Promise<TenantRead> {
    const row = await d.tenants.byId(tenantId);
    if (!row) throw errors.notFound();
    if (row.disabled_at != null) throw errors.tenantDisabled();
    return toTenantRead(row, await d.tenants.modules(tenantId));
  }

  /** Sign-in's last check, whatever the first factor and whether the request named the tenant. */
  async function requireInService(tenantId: string): Promise<void> {
    if ((await d.tenants.byId(tenantId))?.disabled_at != null) throw errors.tenantDisabled();
  }

  return { createOrganization, read, readInService, requireInService, update, requireModule, ...createOperatorTenants(d) };
}

export type TenantsService = ReturnType<typeof createTenantsService>;
