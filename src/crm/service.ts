import type { Principal } from "../auth/service";
import { timeOrderedId } from "../kernel/ids";
import { userActor } from "../events/repo";
import { errors } from "../kernel/errors";
import { type Page, containsPattern, offsetOf, pageOf } from "../kernel/paging";
import type { AccountCreate, AccountPatch, AccountRead, ContactCreate, ContactPatch, ContactRead } from "./model";
import { toAccountRead, toContactRead } from "./read";
import type { AccountRow, ContactRow, CrmStore } from "./repo";

export interface CrmDeps {
  now: () => number;
  repo: CrmStore;
}

/** Trimmed; a blank optional text is no text. */
export const clean = (s: string | null | undefined): string | null => (s === undefined || s === null ? null : s.trim() || null);

/** Accounts and contacts (the pipeline's stages: pipeline-service.ts). */
export function createCrmService(d: CrmDeps) {
  const { repo } = d;

  // ---- accounts ----

  const accountOr404 = async (tenantId: string, id: string): Promise<AccountRow> => {
    const a = await repo.account(tenantId, id);
    if (!a) throw errors.notFound("Account not found.");
    return a;
  };

  async function listAccounts(auth: Principal, p: { page: number; size: number; search: string | null }): Promise<Page<AccountRead>> {
    const pattern = p.search === null ? null : containsPattern(p.search);
    const { rows, total } = await repo.listAccounts(auth.tenantId, pattern, p.size, offsetOf(p.page, p.size));
    return pageOf(rows.map(toAccountRead), total, p.page, p.size);
  }

  async function createAccount(auth: Principal, body: AccountCreate): Promise<AccountRead> {
    const now = d.now();
    const row: AccountRow = {
      id: timeOrderedId(now),
      tenant_id: auth.tenantId,
      name: body.name.trim(),
      domain: clean(body.domain),
      industry: clean(body.industry),
      created_at: now,
      updated_at: now,
    };
    await repo.insertAccount(row, userActor(auth));
    return toAccountRead(row);
  }

  const getAccount = async (auth: Principal, id: string) => toAccountRead(await accountOr404(auth.tenantId, id));

  async function patchAccount(auth: Principal, id: string, body: AccountPatch): Promise<AccountRead> {
    const current = await accountOr404(auth.tenantId, id);
    const next: AccountRow = {
      ...current,
      name: body.name !== undefined ? body.name.trim() : current.name,
      domain: body.domain !== undefined ? clean(body.domain) : current.domain,
      industry: body.industry !== undefined ? clean(body.industry) : current.industry,
      updated_at: d.now(),
    };
    await repo.updateAccount(next, next.name !== current.name, userActor(auth));
    return toAccountRead(next);
  }

  async function deleteAccount(auth: Principal, id: string): Promise<void> {
    await accountOr404(auth.tenantId, id);
    if (!(await repo.deleteAccount(auth.tenantId, id, d.now(), userActor(auth)))) {
      throw errors.conflict("account_has_deals", "This account still has deals; move or delete them first.");
    }
  }

  // ---- contacts ----

  const contactOr404 = async (tenantId: string, id: string): Promise<ContactRow> => {
    const c = await repo.contact(tenantId, id);
    if (!c) throw errors.notFound("Contact not found.");
    return c;
  };

  async function listContacts(auth: Principal, p: { page: number; size: number; search: string | null; accountId?: string | null }): Promise<Page<ContactRead>> {
    const pattern = p.search === null ? null : containsPattern(p.search);
    const { rows, total } = await repo.listContacts(auth.tenantId, pattern, p.size, offsetOf(p.page, p.size), p.accountId ?? null);
    return pageOf(rows.map(toContactRead), total, p.page, p.size);
  }

  async function createContact(auth: Principal, body: ContactCreate): Promise<ContactRead> {
    const accountId = clean(body.account_id);
    if (accountId !== null) await accountOr404(auth.tenantId, accountId);
    const now = d.now();
    const row: ContactRow = {
      id: timeOrderedId(now),
      tenant_id: auth.tenantId,
      first_name: body.first_name.trim(),
      last_name: clean(body.last_name),
      email: clean(body.email)?.toLowerCase() ?? null,
      phone: clean(body.phone),
      account_id: accountId,
      created_at: now,
      updated_at: now,
    };
    await repo.insertContact(row, userActor(auth));
    return toContactRead(row);
  }

  const getContact = async (auth: Principal, id: string) => toContactRead(await contactOr404(auth.tenantId, id));

  async function patchContact(auth: Principal, id: string, body: ContactPatch): Promise<ContactRead> {
    const current = await contactOr404(auth.tenantId, id);
    const accountId = body.account_id !== undefined ? clean(body.account_id) : current.account_id;
    if (accountId !== null && accountId !== current.account_id) await accountOr404(auth.tenantId, accountId);
    const next: ContactRow = {
      ...current,
      first_name: body.first_name !== undefined ? body.first_name.trim() : current.first_name,
      last_name: body.last_name !== undefined ? clean(body.last_name) : current.last_name,
      email: body.email !== undefined ? (clean(body.email)?.toLowerCase() ?? null) : current.email,
      phone: body.phone !== undefined ? clean(body.phone) : current.phone,
      account_id: accountId,
      updated_at: d.now(),
    };
    await repo.updateContact(next, next.first_name !== current.first_name || next.last_name !== current.last_name, userActor(auth));
    return toContactRead(next);
  }

  async function deleteContact(auth: Principal, id: string): Promise<void> {
    await contactOr404(auth.tenantId, id);
    await repo.deleteContact(auth.tenantId, id, d.now(), userActor(auth));
  }

  return {
    listAccounts,
    createAccount,
    getAccount,
    patchAccount,
    deleteAccount,
    listContacts,
    createContact,
    getContact,
    patchContact,
    deleteContact,
  };
}

export type CrmService = ReturnType<typeof createCrmService>;
