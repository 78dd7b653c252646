export interface AuditEntry {
  tenantId: string | null;
  userId: string | null;
  action: string;
  ip: string | null;
  userAgent: string | null;
  detail?: Record<string, unknown>;
}

export interface AuditRow {
  id: number;
  tenant_id: string | null;
  user_id: string | null;
  action: string;
  ip: string | null;
  user_agent: string | null;
  detail: string | null;
  created_at: number;
}

/** The store of rate limits, audit and stored keys. */
export interface SecurityStore {
  hit: (key: string, now: number, windowMs: number) => Promise<{
    count: number;
    window_start: number;
  }>;
  peek: (key: string) => Promise<{
    count: number;
    window_start: number;
    window_ms: number;
  } | null>;
  clear: (key: string) => Promise<void>;
  /** Deletes every counter whose key starts with `prefix`. */
  clearPrefix: (prefix: string) => Promise<void>;
  /** Whether a counter whose key starts with `prefix` has reached `max` in a window still open at `now`. */
  anyReached: (prefix: string, max: number, now: number) => Promise<boolean>;
  sweep: (now: number) => Promise<number>;
  audit: (e: AuditEntry, now: number) => Promise<void>;
  auditForTenant: (tenantId: string, limit?: number) => Promise<AuditRow[]>;
}
