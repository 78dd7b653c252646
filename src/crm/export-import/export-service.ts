import type { Principal } from "../../auth/service";
import { toIso } from "../../kernel/ids";
import { BOM, csvLine, pulledStream } from "../../kernel/csv";
import { containsPattern } from "../../kernel/paging";
import type { AssigneeFilter } from "../deals-service";
import type { SortDir, SortField } from "../model";
import type { CrmStore } from "../repo";
import { EXPORT_CHUNK, EXPORT_COLUMNS, type Kind } from "./model";
import type { DealCursor, ExportFilter, TransferStore } from "./repo";
import type { AccountRow, ContactRow } from "../repo";

export interface TransferDeps {
  now: () => number;
  repo: CrmStore;
  transfer: TransferStore;
  /** One import or export running per organization: a download holds the slot until it ends. */
  exportSlot: (tenantId: string) => () => void;
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
    const release = d.exportSlot(auth.tenantId);
    return pulledStream(headerLine("deals"), async () => {
      for (;;) {
        if (done) return null;
        const { csv, next }: { csv: Uint8Array | null; next: DealCursor | null } = await d.transfer.dealsCsvAfter(auth.tenantId, filter, cursor, EXPORT_CHUNK);
        cursor = next;
        done = next === null;
        if (csv !== null) return csv;
      }
    }, release);
  }

  /** Accounts or contacts, newest first, with the list's search. */
  function exportPeople<R extends AccountRow | ContactRow>(
    tenantId: string,
    kind: "accounts" | "contacts",
    read: (after: R | null) => Promise<R[]>,
    cells: (r: R) => Array<string | number | null>,
  ): ReadableStream<Uint8Array> {
    let after: R | null = null;
    let done = false;
    const release = d.exportSlot(tenantId);
    return pulledStream(headerLine(kind), async () => {
      if (done) return null;
      const rows = await read(after);
      if (rows.length < EXPORT_CHUNK) done = true;
      if (rows.length === 0) return null;
      after = rows[rows.length - 1]!;
      return rows.map((r) => csvLine(cells(r))).join("");
    }, release);
  }

  const exportAccounts = async (auth: Principal, q: { search: string | null }) => {
    const pattern = q.search === null ? null : containsPattern(q.search);
    return exportPeople<AccountRow>(
      auth.tenantId,
      "accounts",
      (after) => d.transfer.accountsAfter(auth.tenantId, pattern, after, EXPORT_CHUNK),
      (a) => [a.id, a.name, a.domain, a.industry, toIso(a.created_at), toIso(a.updated_at), a.external_id ?? null],
    );
  };

  const exportContacts = async (auth: Principal, q: { search: string | null }) => {
    const pattern = q.search === null ? null : containsPattern(q.search);
    return exportPeople<ContactRow & { account_name: string | null }>(
      auth.tenantId,
      "contacts",
      (after) => d.transfer.contactsAfter(auth.tenantId, pattern, after, EXPORT_CHUNK),
      (c) => [c.id, c.first_name, c.last_name, c.email, c.phone, c.account_name, toIso(c.created_at), toIso(c.updated_at), c.external_id ?? null],
    );
  };

  return { exportDeals, exportAccounts, exportContacts };
}

export type TransferService = ReturnType<typeof createTransferService>;
