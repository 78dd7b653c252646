/**
 * A demo organization's users, accounts, contacts and deals (`suite seed`, the bench), drawn from
 * its random source in one fixed order. Both backends' seeds write what these return, so a tenant
 * seeded on either holds the same data (ids aside); each keeps only its own way of writing rows.
 */
import { newId, orderedId } from "../kernel/ids";
import { FIRST_NAMES, INDUSTRIES, LAST_NAMES, type RandomSource, STAGE_WEIGHTS, companyName, companyWord, dealNotes, dealTitle, dealValueCents } from "./demo-data";
import type { DealFields } from "./deals-repo";
import { contactName, searchTextOf, sortKey } from "./model";

export const DAY = 86_400_000;

/** A demo member: the seed gives each its id and the tenant's demo password. */
export interface DemoUser {
  email: string;
  fullName: string;
}

/** One member per 2,000 deals, 12 to 48. */
export function drawDemoUsers(r: RandomSource, subdomain: string, deals: number): DemoUser[] {
  const count = Math.min(48, Math.max(12, Math.round(deals / 2000)));
  const out: DemoUser[] = [];
  for (let i = 0; i < count; i++) {
    const first = FIRST_NAMES[i % FIRST_NAMES.length]!;
    const last = r.pick(LAST_NAMES);
    const email = `${first}.${last}.${i}@${subdomain}.example`.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
    out.push({ email, fullName: `${first} ${last}` });
  }
  return out;
}

export interface DemoAccount {
  id: string;
  name: string;
  /** The company word its domain, contacts' addresses and deal titles use. */
  word: string;
  domain: string;
  industry: string;
  createdAt: number;
  /** Its contacts: drawDemoContacts' result from contactFrom, contactCount of them. */
  contactFrom: number;
  contactCount: number;
}

/** One account per 200 deals, 50 to 5,000. */
export function drawDemoAccounts(r: RandomSource, deals: number, now: number): DemoAccount[] {
  const count = Math.min(5000, Math.max(50, Math.round(deals / 200)));
  const out: DemoAccount[] = [];
  for (let i = 0; i < count; i++) {
    const word = companyWord(r);
    const name = companyName(r, word);
    const industry = r.pick(INDUSTRIES);
    out.push({ id: newId(), name, word, domain: `${word.toLowerCase()}.example`, industry, createdAt: now - r.int(900) * DAY, contactFrom: 0, contactCount: 0 });
  }
  return out;
}

export interface DemoContact {
  id: string;
  accountId: string;
  firstName: string;
  lastName: string;
  email: string;
  phone: string;
  createdAt: number;
  /** As a deal copies it. */
  name: string;
}

/** One to three contacts an account (each account's range set on it). */
export function drawDemoContacts(r: RandomSource, accounts: DemoAccount[], now: number): DemoContact[] {
  const out: DemoContact[] = [];
  for (const a of accounts) {
    a.contactFrom = out.length;
    a.contactCount = 1 + r.int(3);
    for (let i = 0; i < a.contactCount; i++) {
      const first = r.pick(FIRST_NAMES);
      const last = r.pick(LAST_NAMES);
      const email = `${first}.${last}@${a.word}.example`.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
      const phone = `+1 555 ${String(r.int(10_000_000)).padStart(7, "0")}`;
      out.push({ id: newId(), accountId: a.id, firstName: first, lastName: last, email, phone, createdAt: now - r.int(900) * DAY, name: contactName(first, last) });
    }
  }
  return out;
}

/** A demo deal with the names, sort keys and search text it copies, named as its columns are. */
export interface DemoDeal extends Omit<DealFields, "custom_data"> {
  id: string;
  created_at: number;
  updated_at: number;
  title_key: string;
  account_key: string;
  contact_key: string | null;
  assignee_key: string | null;
  search_text: string;
  account_name: string;
  contact_name: string | null;
  assignee_name: string | null;
  assignee_email: string | null;
}

const CURRENCIES = ["USD", "USD", "USD", "EUR", "EUR", "GBP", "JPY"];

/**
 * The draw of deal i of `count` (in order: each draw moves the random source on): two years of
 * history, oldest first, so seq order follows creation as live data's does.
 */
export function demoDealDrawer(
  r: RandomSource,
  o: { count: number; now: number; accounts: DemoAccount[]; contacts: DemoContact[]; users: Array<{ id: string; name: string; email: string }>; stages: string[] },
): (i: number) => DemoDeal {
  const span = 730 * DAY;
  const start = o.now - span;
  const weights = o.stages.map((k) => STAGE_WEIGHTS[k] ?? 5);
  // The sort keys of the few thousand names deals share, made once each (a million deals' own
  // lower-casing took a second of a million-deal seed).
  const keys = new Map<string, string>();
  const keyOf = (name: string): string => {
    let k = keys.get(name);
    if (k === undefined) keys.set(name, (k = sortKey(name)));
    return k;
  };
  return (i) => {
    const account = o.accounts[r.int(o.accounts.length)]!;
    const contact = r.next() < 0.75 ? o.contacts[account.contactFrom + r.int(account.contactCount)] : undefined;
    const assignee = r.next() < 1 / 3 ? null : o.users[r.int(o.users.length)]!;
    const stage = r.weighted(o.stages, weights);
    const created = start + Math.floor((i * span) / o.count) + r.int(60_000);
    const updated = Math.min(o.now, created + r.int(90) * DAY);
    const title = dealTitle(r, account.word);
    const notes = r.next() < 0.3 ? dealNotes(r) : null;
    const closeDate = r.next() < 0.6 ? new Date(created + r.int(240) * DAY).toISOString().slice(0, 10) : null;
    const probability = r.next() < 0.7 ? r.int(21) * 5 : null;
    const cName = contact ? contact.name : null;
    return {
      id: orderedId(i),
      title,
      account_id: account.id,
      contact_id: contact ? contact.id : null,
      assigned_to: assignee ? assignee.id : null,
      stage,
      value_cents: dealValueCents(r),
      currency: r.pick(CURRENCIES),
      close_date: closeDate,
      probability,
      notes,
      created_at: created,
      updated_at: updated,
      title_key: sortKey(title),
      account_key: keyOf(account.name),
      contact_key: cName === null ? null : keyOf(cName),
      assignee_key: assignee ? keyOf(assignee.name) : null,
      search_text: searchTextOf(title, notes, account.name, cName, ""),
      account_name: account.name,
      contact_name: cName,
      assignee_name: assignee ? assignee.name : null,
      assignee_email: assignee ? assignee.email : null,
    };
  };
}
