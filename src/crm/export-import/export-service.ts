import type { Principal } from "../../auth/service";
import { toIso } from "../../kernel/ids";
import { BOM, csvLine, pulledStream } from "../../kernel/csv";
import { containsPattern } from "../../kernel/paging";
import type { AssigneeFilter } from "../deals-service";
import type { SortDir, SortField } from "../model";
import type { CrmStore } from "../repo";
import { cpuSizedSteps } from "../../kernel/step-size";
import { nextTurn } from "./import-upload";
import { EXPORT_COLUMNS, EXPORT_STEP, type Kind } from "./model";
import type { DealCursor, ExportFilter, PeopleCursor, PeopleStep, TransferStore } from "./repo";
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
    const sizer = cpuSizedSteps(EXPORT_STEP);
    // A chunk is read only when the client has taken the last one (pulledStream).
    const release = d.exportSlot(auth.tenantId);
    return pulledStream(headerLine("deals"), async () => {
      for (let steps = 0; ; steps++) {
        if (done) return null;
        // A step walks a bounded stretch of the order and may match nothing in it (a rare search):
        // the next one runs in a turn of its own, as pulledStream gives each chunk.
        if (steps > 0) await nextTurn();
        const { csv, next }: { csv: Uint8Array | null; next: DealCursor | null } = await sizer.step((n) => d.transfer.dealsCsvAfter(auth.tenantId, filter, cursor, n));
        cursor = next;
        done = next === null;
        if (csv !== null) return csv;
      }
    }, release);
  }

  /** Accounts or contacts, newest first, with the list's search: a bounded walk a step, as the deals'. */
  function exportPeople<R extends AccountRow | ContactRow>(
    tenantId: string,
    kind: "accounts" | "contacts",
    read: (after: PeopleCursor | null, limit: number) => Promise<PeopleStep<R>>,
    cells: (r: R) => Array<string | number | null>,
  ): ReadableStream<Uint8Array> {
    let after: PeopleCursor | null = null;
    let done = false;
    const sizer = cpuSizedSteps(EXPORT_STEP);
    const release = d.exportSlot(tenantId);
    return pulledStream(headerLine(kind), async () => {
      for (let steps = 0; ; steps++) {
        if (done) return null;
        if (steps > 0) await nextTurn();
        // The lines are written inside the step: their cost is this thread's too.
        const lines = await sizer.step(async (limit) => {
          const { rows, next } = await read(after, limit);
          after = next;
          done = next === null;
          return rows.length === 0 ? null : rows.map((r) => csvLine(cells(r))).join("");
        });
        if (lines !== null) return lines;
      }
    }, release);
  }

  const exportAccounts = async (auth: Principal, q: { search: string | null }) => {
    const pattern = q.search === null ? null : containsPattern(q.search);
    return exportPeople<AccountRow>(
      auth.tenantId,
      "accounts",
      (after, limit) => d.transfer.accountsAfter(auth.tenantId, pattern, after, limit),
      (a) => [a.id, a.name, a.domain, a.industry, toIso(a.created_at), toIso(a.updated_at), a.external_id ?? null],
    );
  };

  const exportContacts = async (auth: Principal, q: { search: string | null }) => {
    const pattern = q.search === null ? null : containsPattern(q.search);
    return exportPeople<ContactRow & { account_name: string | null }>(
      auth.tenantId,
      "contacts",
      (after, limit) => d.transfer.contactsAfter(auth.tenantId, pattern, after, limit),
      (c) => [c.id, c.first_name, c.last_name, c.email, c.phone, c.account_name, toIso(c.created_at), toIso(c.updated_at), c.external_id ?? null],
    );
  };

  return { exportDeals, exportAccounts, exportContacts };
}

export type TransferService = ReturnType<typeof createTransferService>;
