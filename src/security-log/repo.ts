/** An audit row with the name and address of its user, when that user still exists. */
export interface AuditLogRow {
  id: number;
  user_id: string | null;
  user_email: string | null;
  user_name: string | null;
  action: string;
  ip: string | null;
  user_agent: string | null;
  detail: string | null;
  created_at: number;
}

/** What a reader filters by; since and until are inclusive milliseconds. */
export interface AuditFilter {
  userId: string | null;
  actions: string[] | null;
  since: number;
  until: number;
}

/** A position in the newest-first order: rows strictly before it come next. */
export interface AuditCursor {
  createdAt: number;
  id: number;
}

/**
 * Reading the audit log of one organization, newest first. One statement per filter shape (with
 * or without a user, with or without actions), prepared once when first used, so that each shape
 * gets its own plan: a user's rows from audit_by_tenant_user, the rest from audit_by_tenant_time,
 * whose columns also carry user_id and action so that a filter is checked from the index alone.
 */
export interface AuditStore {
  page(tenantId: string, f: AuditFilter, limit: number, offset: number): Promise<{
    rows: AuditLogRow[];
    total: number;
  }>;
  /** The next `limit` rows after `cursor` (from the newest when null), by keyset: no offset to skip. */
  after(tenantId: string, f: AuditFilter, cursor: AuditCursor | null, limit: number): Promise<AuditLogRow[]>;
}
