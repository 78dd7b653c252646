import type { TransferStore } from "../../crm/transfer-repo";
import { toIso } from "../../db/ids";
import { csvLine } from "../../http/csv";
import { SORT_COLUMN } from "../../crm/deal-columns";
import { formatCents } from "../../crm/money";
import { searchTextOf, sortKey } from "../../crm/model";
import type { AccountRow, ContactRow } from "../../crm/repo";
import type { ImportSink } from "../../crm/transfer-import";
import type { DealCursor, ExportedContact, ExportFilter, ImportDeal } from "../../crm/transfer-repo";
import type { AuditEntry } from "../../security/repo";
import type { Pg, PgTx } from "./database";
import { allocateSeqsInTx, lockCrmShared } from "./deals";
import type { PgAuditWriter } from "./stages";

/** A deals export row: the cells of EXPORT_COLUMNS.deals, in order. */
type ExportRow = {
  id: string; title: string; value_cents: number; currency: string; stage: string; stage_name: string | null; probability: number | null;
  close_date: string | null; account_name: string; contact_name: string | null; assignee_name: string | null; assignee_email: string | null;
  notes: string | null; custom_data: string | null; created_at: number; updated_at: number; k: string | number | null;
};

// The same cells SQLite writes in SQL (transfer-repo.ts' EXPORT_DEAL_LINE): csvCell of each value.
const dealLine = (r: ExportRow) =>
  csvLine([r.id, r.title, formatCents(r.value_cents), r.currency, r.stage, r.stage_name, r.probability, r.close_date, r.account_name,
    r.contact_name, r.assignee_name, r.assignee_email, r.notes, r.custom_data, toIso(r.created_at), toIso(r.updated_at)]);

const encoder = new TextEncoder();
/** Rows an import writes per INSERT statement. */
const BATCH = 2_000;

const ACCOUNT_FILTER = `($2::text IS NULL OR lower(name) LIKE $2 ESCAPE '\\' OR lower(domain) LIKE $2 ESCAPE '\\')`;
const CONTACT_FILTER = `($2::text IS NULL OR lower(c.first_name || ' ' || coalesce(c.last_name, '')) LIKE $2 ESCAPE '\\' OR lower(coalesce(c.email, '')) LIKE $2 ESCAPE '\\')`;
const CONTACT_SELECT = "SELECT c.*, a.name AS account_name FROM contacts c LEFT JOIN accounts a ON a.tenant_id = c.tenant_id AND a.id = c.account_id";

/**
 * PostgreSQL twin of src/crm/transfer-repo.ts. Exports walk the order's index by key
 * (WHERE (key, id) > last, never OFFSET) a chunk at a time, so memory holds one chunk however
 * long the file; the reads are async here (SQLite's are not). An import writes every row in one
 * transaction or none.
 */
export function createPostgresTransferStore(pg: Pg, deps: { security: PgAuditWriter }) {
  /** One chunk of the deals export after `after` in the filter's order (null: from the start), at most `limit` rows, as CSV bytes. */
  async function dealsCsvAfter(tenantId: string, f: ExportFilter, after: DealCursor | null, limit: number): Promise<{ csv: Uint8Array | null; next: DealCursor | null }> {
    const { column, nullable } = SORT_COLUMN[f.sortBy];
    const dir = f.sortDir === "asc" ? "ASC" : "DESC";
    const cmp = f.sortDir === "asc" ? ">" : "<";
    const args: unknown[] = [tenantId];
    const arg = (v: unknown) => `$${args.push(v)}`;
    const where = ["d.tenant_id = $1"];
    if (f.stages !== null) where.push(`d.stage = ANY(${arg(f.stages)}::text[])`);
    if (f.assignee === "") where.push("d.assigned_to IS NULL");
    else if (f.assignee !== null) where.push(`d.assigned_to = ${arg(f.assignee)}`);
    if (f.search !== null) where.push(`strpos(d.search_text, ${arg(f.search)}) > 0`);
    const base = args.length;

    const chunk = async (w: string[], n: number): Promise<ExportRow[]> => {
      // The nullable orders' indexes lead with (key IS NULL): the same expression in ORDER BY lets
      // PostgreSQL walk them without sorting.
      const order = `${nullable ? `(d.${column} IS NULL), ` : ""}d.${column} ${dir}, d.id ${dir}`;
      const sql = `SELECT d.id, d.title, d.value_cents, d.currency, d.stage, s.name AS stage_name, d.probability, d.close_date, d.account_name,
          d.contact_name, d.assignee_name, d.assignee_email, d.notes, d.custom_data, d.created_at, d.updated_at, d.${column} AS k
        FROM deals d LEFT JOIN pipeline_stages s ON s.tenant_id = d.tenant_id AND s.key = d.stage
        WHERE ${w.join(" AND ")} ORDER BY ${order} LIMIT ${arg(n)}`;
      return pg.unsafe<ExportRow>(sql, args);
    };
    const lines: string[] = [];
    let last: ExportRow | undefined;
    let got = 0;
    if (!(after?.inNulls ?? false)) {
      args.length = base;
      const w = [...where];
      if (nullable) w.push(`(d.${column} IS NULL) = false`);
      if (after) w.push(`(d.${column}, d.id) ${cmp} (${arg(after.key)}, ${arg(after.id)})`);
      const rows = await chunk(w, limit);
      for (const r of rows) lines.push(dealLine(r));
      got = rows.length;
      last = rows[rows.length - 1];
      if (got === limit) return { csv: encoder.encode(lines.join("")), next: { key: last!.k, id: last!.id, inNulls: false } };
      if (!nullable) return { csv: got === 0 ? null : encoder.encode(lines.join("")), next: null };
    }
    // Then the rows without a key (nulls last either way), by id in the same direction.
    args.length = base;
    const w = [...where, `(d.${column} IS NULL) = true`];
    if (after?.inNulls) w.push(`d.id ${cmp} ${arg(after.id)}`);
    const rows = await chunk(w, limit - got);
    for (const r of rows) lines.push(dealLine(r));
    if (rows.length > 0) last = rows[rows.length - 1];
    got += rows.length;
    const csv = lines.length === 0 ? null : encoder.encode(lines.join(""));
    if (got < limit) return { csv, next: null };
    return { csv, next: { key: null, id: last!.id, inNulls: true } };
  }

  /** The rows an import accepted, kept until `run` has read the whole file (the sink cannot await). */
  type Accepted = { accounts: AccountRow[]; contacts: ContactRow[]; deals: ImportDeal[] };

  async function writeAcceptedInTx(tx: PgTx, tenantId: string, now: number, rows: Accepted): Promise<void> {
    // Accounts first, then contacts, then deals: each refers only to rows written before it.
    for (let i = 0; i < rows.accounts.length; i += BATCH) {
      const b = rows.accounts.slice(i, i + BATCH);
      await tx.unsafe(
        `INSERT INTO accounts (id, tenant_id, name, domain, industry, created_at, updated_at)
         SELECT u.id, $1, u.name, u.domain, u.industry, $2, $2 FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) AS u(id, name, domain, industry)`,
        [tenantId, now, b.map((a) => a.id), b.map((a) => a.name), b.map((a) => a.domain), b.map((a) => a.industry)],
      );
    }
    for (let i = 0; i < rows.contacts.length; i += BATCH) {
      const b = rows.contacts.slice(i, i + BATCH);
      await tx.unsafe(
        `INSERT INTO contacts (id, tenant_id, first_name, last_name, email, phone, account_id, created_at, updated_at)
         SELECT u.id, $1, u.f, u.l, u.e, u.p, u.a, $2, $2 FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) AS u(id, f, l, e, p, a)`,
        [tenantId, now, b.map((c) => c.id), b.map((c) => c.first_name), b.map((c) => c.last_name), b.map((c) => c.email), b.map((c) => c.phone), b.map((c) => c.account_id)],
      );
    }
    if (rows.deals.length === 0) return;
    let seq = await allocateSeqsInTx(tx, tenantId, rows.deals.length);
    for (let i = 0; i < rows.deals.length; i += BATCH) {
      const b = rows.deals.slice(i, i + BATCH);
      const col = <T>(pick: (d: ImportDeal) => T) => b.map(pick);
      await tx.unsafe(
        `INSERT INTO deals (seq, id, tenant_id, created_at, updated_at, title, account_id, contact_id, assigned_to, stage, value_cents, currency,
           close_date, probability, notes, custom_data, title_key, account_key, contact_key, assignee_key, search_text, account_name, contact_name,
           assignee_name, assignee_email)
         SELECT u.seq, u.id, $1, $2, $2, u.title, u.account_id, u.contact_id, u.assigned_to, u.stage, u.value_cents, u.currency, u.close_date,
           u.probability, u.notes, u.custom_data, u.title_key, u.account_key, u.contact_key, u.assignee_key, u.search_text, u.account_name,
           u.contact_name, u.assignee_name, u.assignee_email
         FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[], $11::text[], $12::text[],
           $13::integer[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], $19::text[], $20::text[], $21::text[], $22::text[],
           $23::text[], $24::text[])
           AS u(seq, id, title, account_id, contact_id, assigned_to, stage, value_cents, currency, close_date, probability, notes, custom_data,
             title_key, account_key, contact_key, assignee_key, search_text, account_name, contact_name, assignee_name, assignee_email)`,
        [
          tenantId, now, b.map((_, j) => seq + j), col((d) => d.id), col((d) => d.title), col((d) => d.account_id), col((d) => d.contact_id),
          col((d) => d.assigned_to), col((d) => d.stage), col((d) => d.value_cents), col((d) => d.currency), col((d) => d.close_date),
          col((d) => d.probability), col((d) => d.notes), col((d) => d.custom_data), col((d) => sortKey(d.title)), col((d) => sortKey(d.account_name)),
          col((d) => (d.contact_name === null ? null : sortKey(d.contact_name))), col((d) => (d.assignee_name === null ? null : sortKey(d.assignee_name))),
          col((d) => searchTextOf(d.title, d.notes, d.account_name, d.contact_name)), col((d) => d.account_name), col((d) => d.contact_name),
          col((d) => d.assignee_name), col((d) => d.assignee_email),
        ],
      );
      seq += b.length;
    }
  }

  const store = {
    dealsCsvAfter,
    /** Accounts newest first, after the last one written (created_at, id). */
    async accountsAfter(tenantId: string, pattern: string | null, after: AccountRow | null, limit: number): Promise<AccountRow[]> {
      const rows = after
        ? await pg.unsafe<AccountRow>(
            `SELECT * FROM accounts WHERE tenant_id = $1 AND ${ACCOUNT_FILTER} AND (created_at, id) < ($4, $5) ORDER BY created_at DESC, id DESC LIMIT $3`,
            [tenantId, pattern, limit, after.created_at, after.id],
          )
        : await pg.unsafe<AccountRow>(`SELECT * FROM accounts WHERE tenant_id = $1 AND ${ACCOUNT_FILTER} ORDER BY created_at DESC, id DESC LIMIT $3`, [tenantId, pattern, limit]);
      return [...rows];
    },
    async contactsAfter(tenantId: string, pattern: string | null, after: ContactRow | null, limit: number): Promise<ExportedContact[]> {
      const rows = after
        ? await pg.unsafe<ExportedContact>(
            `${CONTACT_SELECT} WHERE c.tenant_id = $1 AND ${CONTACT_FILTER} AND (c.created_at, c.id) < ($4, $5) ORDER BY c.created_at DESC, c.id DESC LIMIT $3`,
            [tenantId, pattern, limit, after.created_at, after.id],
          )
        : await pg.unsafe<ExportedContact>(`${CONTACT_SELECT} WHERE c.tenant_id = $1 AND ${CONTACT_FILTER} ORDER BY c.created_at DESC, c.id DESC LIMIT $3`, [tenantId, pattern, limit]);
      return [...rows];
    },
    /** What an import matches names against: the tenant's accounts, contacts and members. */
    async names(tenantId: string) {
      const [accounts, contacts, users] = await Promise.all([
        pg.all<{ id: string; name: string }>`SELECT id, name FROM accounts WHERE tenant_id = ${tenantId} ORDER BY created_at, id`,
        pg.all<{ id: string; first_name: string; last_name: string | null; account_id: string | null }>`
          SELECT id, first_name, last_name, account_id FROM contacts WHERE tenant_id = ${tenantId} ORDER BY created_at, id`,
        pg.all<{ id: string; email: string; full_name: string | null }>`SELECT id, email, full_name FROM users WHERE tenant_id = ${tenantId}`,
      ]);
      return { accounts: [...accounts], contacts: [...contacts], users: [...users] };
    },
    /**
     * Every row of an import, or none. `run` reads the file synchronously, handing each accepted
     * row to the sink; it answers false when a row failed, and nothing is written. Otherwise every
     * row and the audit row (`audit()` is read after `run`, so it can count what was written) are
     * written in one transaction. Differs from SQLite's in its last parameter: the entry to write,
     * not a callback writing it (a PostgreSQL write needs the transaction's handle).
     */
    async importTx(tenantId: string, now: number, run: (sink: ImportSink) => boolean, audit: () => AuditEntry): Promise<boolean> {
      const rows: Accepted = { accounts: [], contacts: [], deals: [] };
      const ok = run({ account: (a) => void rows.accounts.push(a), contact: (c) => void rows.contacts.push(c), deal: (d) => void rows.deals.push(d) });
      if (!ok) return false;
      await pg.begin(async (tx) => {
        await lockCrmShared(tx, tenantId);
        await writeAcceptedInTx(tx, tenantId, now, rows);
        await deps.security.auditInTx(tx, audit(), now);
      });
      return true;
    },
  };
  return store satisfies TransferStore;
}

export type PostgresTransferStore = ReturnType<typeof createPostgresTransferStore>;
