import type { Principal, RequestInfo } from "../auth/service";
import type { AuditEntry } from "../security/repo";
import { toIso } from "../db/ids";
import { BOM, csvLine, pulledStream } from "../http/csv";
import { requireAdmin } from "../http/auth-guard";
import { RequestValidationError } from "../http/errors";
import { containsPattern } from "../http/paging";
import type { AssigneeFilter } from "./deals-service";
import { type SortDir, type SortField, contactName } from "./model";
import type { CrmStore } from "./repo";
import { type ImportPlan, importRows } from "./transfer-import";
import { EXPORT_CHUNK, EXPORT_COLUMNS, type ImportReport, type Kind } from "./transfer-model";
import type { DealCursor, ExportFilter, TransferStore } from "./transfer-repo";
import type { AccountRow, ContactRow } from "./repo";

export interface TransferDeps {
  now: () => number;
  repo: CrmStore;
  transfer: TransferStore;
}

/** The deal list's filters and order (routes.ts reads them with the list's own reader). */
export type DealExportQuery = { search: string | null; stages: string[] | null; sortBy: SortField; sortDir: SortDir } & AssigneeFilter;

/** The header line of an export: the first chunk of its stream. */
const headerLine = (kind: Kind) => BOM + csvLine([...EXPORT_COLUMNS[kind]]);

/** CSV export and import of deals, accounts and contacts. */
export function createTransferService(d: TransferDeps) {
  async function exportDeals(auth: Principal, q: DealExportQuery): Promise<ReadableStream<Uint8Array>> {
    const stageRows = await d.repo.stages(auth.tenantId);
    const known = new Set(stageRows.map((s) => s.key));
    const stages = q.stages === null ? null : [...new Set(q.stages)].filter((s) => known.has(s)).sort();
    const filter: ExportFilter = {
      stages,
      assignee: q.mine ? auth.userId : q.unassigned ? "" : q.assigned_to,
      search: q.search === null ? null : q.search.toLowerCase(),
      sortBy: q.sortBy,
      sortDir: q.sortDir,
    };
    let cursor: DealCursor | null = null;
    let done = stages !== null && stages.length === 0;
    // A chunk is read only when the client has taken the last one (pulledStream).
    return pulledStream(headerLine("deals"), async () => {
      for (;;) {
        if (done) return null;
        const { csv, next }: { csv: Uint8Array | null; next: DealCursor | null } = await d.transfer.dealsCsvAfter(auth.tenantId, filter, cursor, EXPORT_CHUNK);
        cursor = next;
        done = next === null;
        if (csv !== null) return csv;
      }
    });
  }

  /** Accounts or contacts, newest first, with the list's search. */
  function exportPeople<R extends AccountRow | ContactRow>(
    kind: "accounts" | "contacts",
    read: (after: R | null) => Promise<R[]>,
    cells: (r: R) => Array<string | number | null>,
  ): ReadableStream<Uint8Array> {
    let after: R | null = null;
    let done = false;
    return pulledStream(headerLine(kind), async () => {
      if (done) return null;
      const rows = await read(after);
      if (rows.length < EXPORT_CHUNK) done = true;
      if (rows.length === 0) return null;
      after = rows[rows.length - 1]!;
      return rows.map((r) => csvLine(cells(r))).join("");
    });
  }

  const exportAccounts = async (auth: Principal, q: { search: string | null }) => {
    const pattern = q.search === null ? null : containsPattern(q.search);
    return exportPeople<AccountRow>(
      "accounts",
      (after) => d.transfer.accountsAfter(auth.tenantId, pattern, after, EXPORT_CHUNK),
      (a) => [a.id, a.name, a.domain, a.industry, toIso(a.created_at), toIso(a.updated_at)],
    );
  };

  const exportContacts = async (auth: Principal, q: { search: string | null }) => {
    const pattern = q.search === null ? null : containsPattern(q.search);
    return exportPeople<ContactRow & { account_name: string | null }>(
      "contacts",
      (after) => d.transfer.contactsAfter(auth.tenantId, pattern, after, EXPORT_CHUNK),
      (c) => [c.id, c.first_name, c.last_name, c.email, c.phone, c.account_name, toIso(c.created_at), toIso(c.updated_at)],
    );
  };

  /**
   * An import (admins): every row is checked first, against the names the tenant has; a dry run
   * answers the report, otherwise all rows are written in one transaction, or none when any fails
   * (then a 422 whose items are the row errors, loc ["body", line, column]).
   */
  async function importCsv(auth: Principal, kind: Kind, text: string, opts: { dryRun: boolean; createMissing: boolean }, req: RequestInfo): Promise<ImportReport> {
    requireAdmin(auth);
    const [names, stages] = await Promise.all([d.transfer.names(auth.tenantId), d.repo.stages(auth.tenantId)]);
    const known = { ...names, stages, contactName };
    const now = d.now();
    // Who imported what, in the same transaction: counts only, never the file's contents.
    const audit = (created: ImportReport["created"]) => (): AuditEntry =>
      ({ tenantId: auth.tenantId, userId: auth.userId, action: "crm.import", ip: req.ip, userAgent: req.userAgent, detail: { kind, ...created } });
    let plan: ImportPlan;
    if (opts.dryRun) plan = importRows(kind, text, known, opts.createMissing, null);
    else {
      // Read and written in one pass inside the transaction: rows are inserted as they are
      // accepted, and the whole transaction is rolled back if any row fails.
      let read: ImportPlan | null = null;
      const created = { deals: 0, accounts: 0, contacts: 0 };
      await d.transfer.importTx(
        auth.tenantId,
        now,
        (sink) => {
          read = importRows(kind, text, known, opts.createMissing, sink);
          Object.assign(created, read.created);
          return read.errorCount === 0;
        },
        audit(created),
      );
      plan = read!;
    }
    const report: ImportReport = {
      kind,
      dry_run: opts.dryRun,
      rows: plan.rows,
      valid_rows: plan.validRows,
      error_count: plan.errorCount,
      errors: plan.errors,
      created: { deals: plan.created.deals, accounts: plan.created.accounts, contacts: plan.created.contacts },
    };
    if (!opts.dryRun && plan.errorCount > 0) {
      throw new RequestValidationError(plan.errors.map((e) => ({ loc: ["body", e.line, e.column ?? "row"], msg: e.message, type: "csv_row_invalid" })));
    }
    return report;
  }

  return { exportDeals, exportAccounts, exportContacts, importCsv };
}

export type TransferService = ReturnType<typeof createTransferService>;
