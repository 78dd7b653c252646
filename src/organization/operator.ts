import { type OperatorCommand, operatorEntry } from "../security-log/operator";
import { toIso } from "../kernel/ids";
import { errors } from "../kernel/errors";
import type { TenantRow, TenantsStore } from "./repo";

export interface OperatorTenant {
  id: string;
  subdomain: string;
  name: string;
  members: number;
  created_at: string;
  /** When it was disabled; null: in service. */
  disabled_at: string | null;
}

/** What `suite tenant list|disable|enable` do, for the server's operator (src/cli/tenants.ts). */
export function createOperatorTenants(d: { now: () => number; tenants: TenantsStore }) {
  /** The organization with this subdomain; 404 tenant_not_found when none has it. */
  async function bySubdomain(subdomain: string): Promise<TenantRow> {
    const row = await d.tenants.bySubdomain(subdomain.trim().toLowerCase());
    if (!row) throw errors.tenantNotFound();
    return row;
  }

  async function listAll(): Promise<OperatorTenant[]> {
    return (await d.tenants.list()).map((r) => ({
      id: r.id,
      subdomain: r.subdomain,
      name: r.name,
      members: r.members,
      created_at: toIso(r.created_at),
      disabled_at: r.disabled_at == null ? null : toIso(r.disabled_at),
    }));
  }

  /**
   * Disables or re-enables an organization. Its data and sessions stay: while disabled every
   * request naming it or carrying one of its sessions is 403 tenant_disabled, and enabling lets
   * those sessions work again. Answers whether anything changed.
   */
  async function setDisabled(subdomain: string, disabled: boolean, by: OperatorCommand): Promise<{ tenant: TenantRow; changed: boolean }> {
    const tenant = await bySubdomain(subdomain);
    const now = d.now();
    const r = await d.tenants.setDisabled(tenant.id, disabled ? now : null, now, (before) =>
      operatorEntry(before.id, disabled ? "tenant.disabled" : "tenant.enabled", by, { subdomain: before.subdomain }),
    );
    if (!r) throw errors.tenantNotFound();
    return { tenant: r.before, changed: r.changed };
  }

  return { bySubdomain, listAll, setDisabled };
}
