import { expect } from "bun:test";
import type { RequestOptions } from "../../helpers";
import { parse } from "csv-parse/sync";
import { unguard } from "../../../src/kernel/csv";
import { countOf, type World } from "./world";
import { testSql } from "../../support/sql";

/** What the tables of cross-tenant attempts (attempts-*.ts) are made of, and their shared checks. */

export interface Sent {
  method: string;
  path: string;
  o: RequestOptions;
}

export interface Attempt {
  /** "METHOD /api/v1/path/{param}", as the OpenAPI document names the operation. */
  op: string;
  what: string;
  send: (w: World) => Sent | Promise<Sent>;
  /** The contract's answer: status and `code` (or, for 422, the first item's `type`). */
  expect: { status: number; code?: string; type?: string };
  /** Further checks on the parsed body: lists hold only B's rows and count only B's. */
  check?: (body: any, w: World) => void | Promise<void>;
  /** The body names A's tenant id, which must be ignored. */
  tenantIdInBody?: boolean;
}

export const API = "/api/v1";
export const PW = "correct horse battery";

/** B's admin on B's host; `extra` overrides. */
export const asB = (w: World, extra: RequestOptions = {}): RequestOptions => ({ token: w.b.admin.access, tenant: "bravo", ...extra });
export const req = (method: string, path: string, o: RequestOptions): Sent => ({ method, path: `${API}${path}`, o });

export const notFound = { status: 404, code: "not_found" };
export const mismatch = { status: 403, code: "tenant_mismatch" };

/** A page or array of B's rows only: every id is B's, and the total is B's count. */
export const ownPage = (table: string, where: string | ((w: World) => string) = "TRUE") => async (body: any, w: World) => {
  const cond = typeof where === "function" ? where(w) : where;
  const items: Array<{ id: string; tenant_id?: string }> = Array.isArray(body) ? body : body.items;
  const bIds = new Set((await testSql(w.t.ctx).all<{ id: string }>(`SELECT id FROM ${table} WHERE tenant_id = ?1 AND (${cond})`, w.b.tenantId)).map((r) => r.id));
  expect(items.filter((i) => !bIds.has(i.id)).map((i) => i.id)).toEqual([]);
  for (const i of items) if ("tenant_id" in i) expect(i.tenant_id).toBe(w.b.tenantId);
  const n = await countOf(w.t, table, w.b.tenantId, cond);
  if (Array.isArray(body)) expect(items.length).toBe(n);
  else expect({ total: body.total, pages: body.pages }).toEqual({ total: n, pages: Math.ceil(n / body.size) });
};

/** A page that must be empty: a search or filter naming only A's data. */
export const emptyPage = (body: any) => expect({ items: body.items, total: body.total, pages: body.pages }).toEqual({ items: [], total: 0, pages: 0 });

/** A created or updated row that landed in B (or the new tenant), never in A. */
export const landedInB = (body: any, w: World) => expect(body.tenant_id).toBe(w.b.tenantId);

export const INVITATION_STATUS: Record<string, (now: number) => string> = {
  pending: (now) => `accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ${now}`,
  accepted: () => "accepted_at IS NOT NULL",
  revoked: () => "accepted_at IS NULL AND revoked_at IS NOT NULL",
};

export const A_SEARCHES = ["quokka", "Quokka Corp", "QUOKKA PERSON", "the quokka people", "qu", "alpha", "quokka-stage"];

/** An answer with its body parsed: JSON, or a CSV download as an array of rows (ids without the formula guard). */
export async function answerOf(w: World, sent: Sent): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await w.t.request(sent.method, sent.path, sent.o);
  // A live event stream never ends by itself: what it sends in its first half second, as `items`.
  if (res.headers.get("content-type")?.startsWith("text/event-stream")) return { status: res.status, headers: res.headers, body: { items: await firstEvents(res, 500) } };
  const text = await res.text();
  if (!text) return { status: res.status, headers: res.headers, body: null };
  if (!res.headers.get("content-type")?.startsWith("text/csv")) return { status: res.status, headers: res.headers, body: JSON.parse(text) };
  const rows = (parse(text, { bom: true, columns: true }) as Array<Record<string, string>>).map((r) => ({ ...r, id: unguard(r.id ?? "") }));
  return { status: res.status, headers: res.headers, body: rows };
}

/** The events a Server-Sent Events answer sends within `ms` (their `data`, parsed); then it is cancelled. */
async function firstEvents(res: Response, ms: number): Promise<unknown[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + ms;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    const chunk = await Promise.race([reader.read(), Bun.sleep(left).then(() => null)]);
    if (chunk === null || chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
  }
  await reader.cancel().catch(() => {});
  return [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!));
}

/** A CSV file of deals as B's admin would import it. */
export const csvImport = (w: World, kind: string, csv: string, query: string): Sent =>
  req("POST", `/crm/${kind}/import?${query}`, { ...asB(w), raw: csv, headers: { "content-type": "text/csv" } });
