/**
 * The store side of deleting an organization (src/organization/delete.ts). The deletion is a
 * marker row written first, then many short transactions that each remove a bounded batch of the
 * organization's rows from one table, then the tenants row and the marker: a process killed in
 * between leaves the marker, and the next start finishes the work from where the rows stand.
 */
export interface DeletionMarker {
  tenantId: string;
  /** JSON the service keeps with the marker (subdomain, export token, who asked, when). */
  state: string;
}

/** Where a table's walk stands: null once the table holds none of the organization's rows. */
export type DeletionCursor = number | null;

export interface TenantDeletionStore {
  /**
   * In one transaction: the organization disabled (every request to it answers 403
   * tenant_disabled from here on) and the deletion's marker written (replaced when one exists).
   * False when no organization has this id.
   */
  begin(tenantId: string, state: string, now: number): Promise<boolean>;
  /** Replaces the marker's state (the export's token once it is written). */
  update(tenantId: string, state: string): Promise<void>;
  /** Every deletion begun and not finished (a restart resumes them). */
  pending(): Promise<DeletionMarker[]>;
  /**
   * Every table that holds organization rows, read from the database's own catalog (so a table
   * added later is covered without a change here), in an order a delete can follow: the deals
   * first (their triggers feed the search counters, removed after them), then each table before
   * the tables it refers to. The tenants row is not in it (finish removes it).
   */
  tables(): Promise<string[]>;
  /**
   * Removes at most `limit` of the organization's rows of `table` in one short transaction,
   * starting from `from` (0 at first): how many went, and where the next batch starts (null: the
   * table holds none of them any more).
   */
  deleteSome(tenantId: string, table: string, from: number, limit: number): Promise<{ deleted: number; next: DeletionCursor }>;
  /** Last: rows naming the organization outside its tables (rate-limit windows), the tenants row and the marker. */
  finish(tenantId: string): Promise<void>;
}

/**
 * The deals first (deleting one appends to the search counters' pending rows and updates the
 * deal counts: those tables are emptied after), preceded only by the tables that refer to deals
 * (a deal's timeline and notes); then every table before those it refers to.
 */
export function deletionOrder(tables: string[], refersTo: Map<string, Set<string>>): string[] {
  const out: string[] = [];
  const done = new Set<string>();
  const visit = (t: string, path: Set<string>) => {
    if (done.has(t) || path.has(t)) return;
    path.add(t);
    // Whatever refers to t goes before it.
    for (const other of tables) if (refersTo.get(other)?.has(t)) visit(other, path);
    path.delete(t);
    if (!done.has(t)) {
      done.add(t);
      out.push(t);
    }
  };
  if (tables.includes("deals")) visit("deals", new Set());
  for (const t of [...tables].sort()) visit(t, new Set());
  return out;
}
