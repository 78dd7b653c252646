import type { Config } from "../../config";
import { isUniqueViolation } from "../../kernel/unique-violation";
import { newId, toIso } from "../../kernel/ids";
import { organizationUrl } from "../../mail/links";
import { errors, RequestValidationError } from "../../kernel/errors";
import { offsetOf, pageOf, type Page } from "../../kernel/paging";
import type { AuditEntry } from "../../security/repo";
import type { UsersStore } from "../../team/repo";
import { auditEntry } from "../audit-entry";
import type { Principal, RequestInfo } from "../service";
import type { Sealer } from "../../security/secret-box";
import type { CreateProviderBody, ProviderRead, PublicProvider, PublicProviderList, UpdateProviderBody } from "./model";
import { issuerProblem } from "./protocol";
import type { OidcStore, ProviderRow } from "./repo";

export const CALLBACK_PATH = "/api/v1/auth/oauth/callback";

export interface ProvidersDeps {
  config: Config;
  now: () => number;
  repo: OidcStore;
  users: UsersStore;
  /** Seals client secrets, bound to the provider's id. */
  sealer: Sealer;
  /** 403 reauthentication_required unless the session proved its first factor within SUITE_REAUTH_WINDOW (as 2FA changes). */
  requireRecentProof: (p: Principal) => void;
  /** Whether the outbound guard refuses the issuer's host (a private, loopback, link-local... address). */
  issuerRefused: (issuer: string) => Promise<"refused_address" | null>;
}

const domainsOf = (row: ProviderRow): string[] => JSON.parse(row.allowed_domains) as string[];

/** An organization's identity providers, configured by its admins. */
export function createProvidersService(d: ProvidersDeps) {
  const redirectUri = (subdomain: string) => organizationUrl(d.config, subdomain, CALLBACK_PATH).href;

  const toRead = (row: ProviderRow, subdomain: string): ProviderRead => ({
    id: row.id,
    kind: row.kind,
    name: row.name,
    issuer: row.issuer,
    client_id: row.client_id,
    allowed_domains: domainsOf(row),
    auto_join: row.auto_join === 1,
    default_profile_id: row.default_profile_id,
    enabled: row.enabled === 1,
    redirect_uri: redirectUri(subdomain),
    created_at: toIso(row.created_at),
  });

  /** The issuer rule: `oidc` needs an https issuer (loopback http in tests only); the others have fixed ones. */
  function checkIssuer(kind: ProviderRow["kind"], issuer: string | null | undefined): string | null {
    const bad = (msg: string) => new RequestValidationError([{ loc: ["body", "issuer"], msg: `Value error, ${msg}`, type: "value_error" }]);
    if (kind !== "oidc") {
      if (issuer != null) throw bad(`${kind} has a fixed issuer; give one only for kind oidc`);
      return null;
    }
    if (issuer == null) throw bad("an oidc provider needs its issuer URL");
    const problem = issuerProblem(d.config, issuer.trim());
    if (problem) throw bad(`the issuer ${problem}`);
    return issuer.trim().replace(/\/+$/, "");
  }

  /** The issuer's host must be one the server may reach: not a private, loopback or link-local address (the operator's SUITE_OUTBOUND_ALLOW aside). */
  async function checkIssuerAddress(issuer: string | null): Promise<void> {
    if (issuer === null || (await d.issuerRefused(issuer)) === null) return;
    const msg =
      "Value error, the issuer's host is on a private, loopback, link-local or reserved address, which this server does not connect to (refused_address): " +
      "give the provider's public address, or ask the server's operator to allow this one (SUITE_OUTBOUND_ALLOW).";
    throw new RequestValidationError([{ loc: ["body", "issuer"], msg, type: "value_error" }]);
  }

  async function checkProfile(tenantId: string, id: string | null | undefined): Promise<void> {
    if (id != null && !(await d.users.profile(tenantId, id))) throw errors.notFound("No profile with this id in this organization.");
  }

  async function checkName(tenantId: string, name: string, self?: string): Promise<void> {
    const other = await d.repo.providerByName(tenantId, name);
    if (other && other.id !== self) throw errors.conflict("provider_name_taken", "Another identity provider of this organization has this name.");
  }

  const normalizeDomains = (list: string[] | undefined) => JSON.stringify([...new Set((list ?? []).map((s) => s.trim().toLowerCase()))]);
  const entry = (p: Principal, action: string, req: RequestInfo, row: ProviderRow): AuditEntry =>
    auditEntry(action, { tenantId: p.tenantId, userId: p.userId }, req, { provider_id: row.id, kind: row.kind, name: row.name, enabled: row.enabled === 1 });

  // Adding, changing or removing a provider decides who can sign in: a step-up, like 2FA changes.
  async function create(p: Principal, body: CreateProviderBody, req: RequestInfo): Promise<ProviderRead> {
    d.requireRecentProof(p);
    const issuer = checkIssuer(body.kind, body.issuer);
    await checkIssuerAddress(issuer);
    const name = body.name.trim();
    await checkProfile(p.tenantId, body.default_profile_id);
    await checkName(p.tenantId, name);
    const now = d.now();
    const id = newId();
    const row: ProviderRow = {
      id,
      tenant_id: p.tenantId,
      kind: body.kind,
      name,
      issuer,
      client_id: body.client_id.trim(),
      client_secret_sealed: d.sealer.seal(body.client_secret, id),
      allowed_domains: normalizeDomains(body.allowed_domains),
      auto_join: body.auto_join ? 1 : 0,
      default_profile_id: body.default_profile_id ?? null,
      enabled: body.enabled === false ? 0 : 1,
      created_at: now,
      updated_at: now,
    };
    try {
      await d.repo.insertProvider(row, entry(p, "identity_provider.created", req, row));
    } catch (e) {
      if (isUniqueViolation(e)) await checkName(p.tenantId, name);
      throw e;
    }
    return toRead(row, p.subdomain);
  }

  async function list(p: Principal, q: { page: number; size: number }): Promise<Page<ProviderRead>> {
    const [rows, total] = await Promise.all([d.repo.providerPage(p.tenantId, q.size, offsetOf(q.page, q.size)), d.repo.providerCount(p.tenantId)]);
    return pageOf(rows.map((r) => toRead(r, p.subdomain)), total, q.page, q.size);
  }

  async function get(p: Principal, id: string): Promise<ProviderRow> {
    const row = await d.repo.provider(p.tenantId, id);
    if (!row) throw errors.notFound("No such identity provider.");
    return row;
  }

  async function update(p: Principal, id: string, body: UpdateProviderBody, req: RequestInfo): Promise<ProviderRead> {
    d.requireRecentProof(p);
    const row = await get(p, id);
    const issuer = body.issuer === undefined ? row.issuer : checkIssuer(row.kind, body.issuer);
    if (body.issuer !== undefined) await checkIssuerAddress(issuer);
    const name = body.name?.trim() ?? row.name;
    if (name !== row.name) await checkName(p.tenantId, name, id);
    if (body.default_profile_id !== undefined) await checkProfile(p.tenantId, body.default_profile_id);
    const next: ProviderRow = {
      ...row,
      name,
      issuer,
      client_id: body.client_id?.trim() ?? row.client_id,
      client_secret_sealed: body.client_secret === undefined ? row.client_secret_sealed : d.sealer.seal(body.client_secret, id),
      allowed_domains: body.allowed_domains === undefined ? row.allowed_domains : normalizeDomains(body.allowed_domains),
      auto_join: body.auto_join === undefined ? row.auto_join : body.auto_join ? 1 : 0,
      default_profile_id: body.default_profile_id === undefined ? row.default_profile_id : body.default_profile_id,
      enabled: body.enabled === undefined ? row.enabled : body.enabled ? 1 : 0,
      updated_at: d.now(),
    };
    const changed = Object.keys(body).filter((k) => (body as Record<string, unknown>)[k] !== undefined);
    const audit = entry(p, "identity_provider.updated", req, next);
    audit.detail = { ...audit.detail, changed };
    await d.repo.updateProvider(next, audit);
    return toRead(next, p.subdomain);
  }

  async function remove(p: Principal, id: string, req: RequestInfo): Promise<void> {
    d.requireRecentProof(p);
    const row = await get(p, id);
    if (!(await d.repo.deleteProvider(p.tenantId, id, entry(p, "identity_provider.deleted", req, row), d.now()))) throw errors.notFound("No such identity provider.");
  }

  /** The sign-in page's buttons: enabled providers, name and kind only. */
  async function listPublic(tenantId: string): Promise<PublicProviderList> {
    return (await d.repo.enabledProviders(tenantId)).map((r): PublicProvider => ({ id: r.id, name: r.name, kind: r.kind }));
  }

  return { create, list, update, remove, listPublic, redirectUri, domainsOf, openSecret: (row: ProviderRow) => d.sealer.open(row.client_secret_sealed, row.id) };
}

export type ProvidersService = ReturnType<typeof createProvidersService>;
