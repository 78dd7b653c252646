import type { Db } from "../../src/db/database";
import { newId } from "../../src/kernel/ids";
import type { DealListQuery } from "../../src/crm/model";
import { type TestApp, testApp } from "../helpers";
import { insertUser } from "../support/sql";

export const CRM = "/api/v1/crm";

/** A signed-up organization and shorthand for its CRM calls. */
export async function crmOrg(t: TestApp, subdomain?: string, extra: Record<string, unknown> = {}) {
  const org = await t.signup(subdomain, extra);
  const token = org.access_token;
  const call = (method: string, path: string, body?: unknown) => t.json(method, `${CRM}${path}`, { token, body });
  const ok = async (method: string, path: string, body?: unknown, status = method === "POST" ? 201 : 200) => {
    const r = await call(method, path, body);
    if (r.status !== status) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  return {
    ...org,
    token,
    call,
    ok,
    account: (name: string, more: Record<string, unknown> = {}) => ok("POST", "/accounts", { name, ...more }),
    contact: (first_name: string, last_name: string | null, more: Record<string, unknown> = {}) =>
      ok("POST", "/contacts", { first_name, last_name, ...more }),
    deal: (body: Record<string, unknown>) => ok("POST", "/deals", body),
    list: (query = "") => ok("GET", `/deals${query ? `?${query}` : ""}`),
  };
}

export type CrmOrg = Awaited<ReturnType<typeof crmOrg>>;

/** A fresh app; each test file closes its own. */
export const crmApp = () => testApp();

/** A member written straight to the database (never signs in): an assignee with a name. */
export async function addUser(t: TestApp, tenantId: string, email: string, fullName: string | null): Promise<string> {
  const id = newId();
  await insertUser(t.ctx, { id, tenant_id: tenantId, email, full_name: fullName, role: "member", profile_id: null, password_hash: "unused", created_at: t.ctx.now() });
  return id;
}

/** The 422 items of a response, reduced to what a test compares. */
export const items422 = (body: { detail: Array<{ loc: unknown[]; type: string; ctx?: unknown }> }) =>
  body.detail.map((d) => ({ loc: d.loc, type: d.type, ...(d.ctx ? { ctx: d.ctx } : {}) }));

export type Deal = Record<string, any> & { id: string };

/** The deal list's order (docs/interface.md#the-deal-list), computed independently: key, nulls last both ways, ties by id in the same direction. */
export function referenceSort(deals: Deal[], field: string, dir: "asc" | "desc"): string[] {
  const key = (d: Deal): string | number | null => {
    const v = d[field];
    if (v === null || v === undefined) return null;
    if (field === "value") return Math.round(Number(v) * 100);
    if (field === "probability") return v as number;
    return typeof v === "string" ? v.toLowerCase() : v;
  };
  const sign = dir === "asc" ? 1 : -1;
  return [...deals]
    .sort((a, b) => {
      const ka = key(a);
      const kb = key(b);
      if (ka === null && kb !== null) return 1;
      if (kb === null && ka !== null) return -1;
      if (ka !== null && kb !== null && ka !== kb) return (ka < kb ? -1 : 1) * sign;
      return (a.id < b.id ? -1 : 1) * sign;
    })
    .map((d) => d.id);
}

/** A tenant's deals as the list's references read them (SQLite's rows; value in currency units). */
export function dealsOf(db: Db, tenantId: string): Deal[] {
  const rows = db
    .query(
      `SELECT seq, id, title, notes, account_name, contact_name, assignee_name, assigned_to, stage, value_cents, probability, close_date,
        created_at, updated_at FROM deals WHERE tenant_id = ?1`,
    )
    .all(tenantId) as Array<Record<string, any>>;
  return rows.map((r) => ({ ...r, id: r.id, value: r.value_cents / 100 }));
}

/** The deal list's answer, computed independently: substring of title, notes, account or contact name, any case; filters; the list's order (docs/interface.md#the-deal-list). */
export function referencePage(deals: Deal[], q: DealListQuery): { seqs: number[]; total: number } {
  const term = q.search?.toLowerCase();
  const found = deals.filter(
    (d) =>
      (term === undefined || [d.title, d.notes, d.account_name, d.contact_name].some((f) => typeof f === "string" && f.toLowerCase().includes(term))) &&
      (q.stages === null || q.stages.includes(d.stage)) &&
      (q.assignee === null || (q.assignee === "" ? d.assigned_to === null : d.assigned_to === q.assignee)),
  );
  const seqOf = new Map(found.map((d) => [d.id, d.seq as number]));
  const from = (q.page - 1) * q.size;
  return { seqs: referenceSort(found, q.sortBy, q.sortDir).slice(from, from + q.size).map((id) => seqOf.get(id)!), total: found.length };
}
