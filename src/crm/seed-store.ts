/** A demo organization to fill (`suite seed`, the benches). */
export interface SeedTenant {
  tenantId: string;
  subdomain: string;
  deals: number;
  /** One argon2 hash, computed once by the caller, shared by every demo user. */
  passwordHash: string;
}

export interface SeedResult {
  subdomain: string;
  users: number;
  accounts: number;
  contacts: number;
  deals: number;
}

/** What `suite seed` needs of the database: demo CRM data written fast, and taken out again. */
export interface DemoSeedStore {
  /**
   * Writes demo users, accounts, contacts and deals for one organization, and sets every demo
   * user's password. In bulk when the seed has the database to itself; otherwise (a running
   * server) in small transactions alongside it: then `alongside` is called first and `progress`
   * after each batch, and `held` at the end with the longest write transaction (ms, and what it wrote; SQLite).
   */
  seed(t: SeedTenant, now: number, hooks: { alongside(): void; progress(done: number, total: number): void; held?(ms: number, what: string): void }): Promise<SeedResult>;
  /** Removes an organization a failed seed created, in small batches. */
  removeTenant(tenantId: string): Promise<void>;
}
