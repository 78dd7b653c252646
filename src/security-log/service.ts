import type { Principal } from "../auth/service";
import { requireAdmin } from "../kernel/principal";
import { csvHeaders, csvStream } from "../kernel/csv";
import { type Page, offsetOf, pageOf } from "../kernel/paging";
import { CSV_HEADER, type AuditLogEntry, csvCells, toAuditLogEntry } from "./model";
import type { AuditCursor, AuditFilter, AuditStore } from "./repo";

export interface AuditDeps {
  now: () => number;
  repo: AuditStore;
}

/** Rows per read of a CSV download: memory stays at one batch however long the log. */
export const CSV_BATCH = 500;

/** The audit log, read by an organization's admins. */
export function createAuditService(d: AuditDeps) {
  async function page(auth: Principal, f: AuditFilter, p: { page: number; size: number }): Promise<Page<AuditLogEntry>> {
    requireAdmin(auth);
    const { rows, total } = await d.repo.page(auth.tenantId, f, p.size, offsetOf(p.page, p.size));
    return pageOf(rows.map(toAuditLogEntry), total, p.page, p.size);
  }

  /**
   * Every matching row, newest first, as a CSV download read in batches by keyset on
   * (created_at, id). Rows written after the download starts are not in it: the first cursor is now.
   */
  function csv(auth: Principal, f: AuditFilter): Response {
    requireAdmin(auth);
    const bounded: AuditFilter = { ...f, until: Math.min(f.until, d.now()) };
    let cursor: AuditCursor | null = null;
    let done = false;
    const next = async () => {
      if (done) return [];
      const rows = await d.repo.after(auth.tenantId, bounded, cursor, CSV_BATCH);
      if (rows.length < CSV_BATCH) done = true;
      const last = rows.at(-1);
      if (last) cursor = { createdAt: last.created_at, id: last.id };
      return rows;
    };
    const day = new Date(d.now()).toISOString().slice(0, 10);
    return new Response(csvStream(CSV_HEADER, next, csvCells), { headers: csvHeaders(`audit-log-${day}.csv`) });
  }

  return { page, csv };
}

export type AuditService = ReturnType<typeof createAuditService>;
