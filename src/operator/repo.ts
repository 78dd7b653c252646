/** An operator: a person who runs this server, apart from every organization's users. */
export interface OperatorRow {
  id: string;
  email: string;
  password_hash: string;
  /** Sealed under the encryption key (security/secret-box.ts), as the users' TOTP secrets are. */
  totp_secret: string;
  /** The last TOTP step accepted: a code is never accepted twice. */
  totp_last_step: number | null;
  created_at: number;
  last_sign_in_at: number | null;
}

export interface OperatorSessionRow {
  id: string;
  operator_id: string;
  created_at: number;
  last_used_at: number;
  expires_at: number;
  proven_at: number;
  ended_at: number | null;
}

/** A session with its operator's email, as the guard reads it. */
export interface OperatorSessionWithEmail extends OperatorSessionRow {
  email: string;
}

/** One of an operator's live sessions, as their session list shows it. */
export interface OperatorSessionListRow {
  id: string;
  created_at: number;
  last_used_at: number;
  expires_at: number;
  ip: string | null;
  user_agent: string | null;
}

export interface NewOperatorSession {
  id: string;
  tokenHash: string;
  operatorId: string;
  createdAt: number;
  expiresAt: number;
  ip: string | null;
  userAgent: string | null;
}

export interface OperatorAuditEntry {
  operatorId: string | null;
  operatorEmail: string | null;
  action: string;
  /** What it acted on: `organization:acme`, `mail:<id>`, `operator:a@b.test`. */
  target: string | null;
  ip: string | null;
  userAgent: string | null;
  detail?: Record<string, unknown>;
}

export interface OperatorAuditRow {
  id: number;
  operator_email: string | null;
  action: string;
  target: string | null;
  ip: string | null;
  user_agent: string | null;
  detail: string;
  created_at: number;
}

/** One organization as the console lists it. */
export interface ConsoleOrganizationRow {
  id: string;
  name: string;
  subdomain: string;
  created_at: number;
  disabled_at: number | null;
  members: number;
  deals: number;
  /** The latest use of any of its members' sessions; null when none. */
  last_activity_at: number | null;
}

export interface ConsoleMailRow {
  id: string;
  tenant_id: string | null;
  subdomain: string | null;
  kind: string;
  recipient: string;
  subject: string;
  status: "pending" | "sending" | "failed";
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  created_at: number;
}

export interface ConsoleJobRow {
  id: string;
  tenant_id: string;
  subdomain: string;
  kind: string;
  status: string;
  total: number;
  done: number;
  error_count: number;
  created_at: number;
  finished_at: number | null;
}

export interface Paged<T> {
  rows: T[];
  total: number;
}

/**
 * The store of the operators and their console. The console's reads go across organizations by
 * design (it is the server's own view); nothing here is ever shown to an organization.
 */
/** A server process seen by the database: its connections' name and address, how many, since when (ms). */
export interface ConsoleInstanceRow {
  name: string;
  address: string | null;
  connections: number;
  since: number;
  /** The process asking (its query ran on one of these connections). */
  mine: boolean;
}

export interface OperatorStore {
  /** false when the email is taken. */
  create(row: OperatorRow): Promise<boolean>;
  byEmail(email: string): Promise<OperatorRow | null>;
  byId(id: string): Promise<OperatorRow | null>;
  list(): Promise<OperatorRow[]>;
  /** Removes the operator with their sessions and challenges; false when none has the email. */
  remove(email: string): Promise<boolean>;
  /** Records a sign-in: the accepted step (only forward) and the time; false when the step was already used. */
  acceptStep(id: string, step: number, at: number): Promise<boolean>;

  addChallenge(tokenHash: string, operatorId: string, expiresAt: number): Promise<void>;
  /** Spends a challenge: its operator id when it existed and had not expired; it is gone either way. */
  takeChallenge(tokenHash: string, now: number): Promise<string | null>;
  /** Whether the challenge exists and is live, without spending it (a wrong code keeps it). */
  peekChallenge(tokenHash: string, now: number): Promise<string | null>;

  createSession(s: NewOperatorSession): Promise<void>;
  /** A live session (not ended, not expired, used within `idleSince`) by its token's hash. */
  sessionByHash(tokenHash: string, now: number, idleSince: number): Promise<OperatorSessionWithEmail | null>;
  touchSession(id: string, at: number): Promise<void>;
  proveSession(id: string, at: number): Promise<void>;
  endSession(id: string, at: number): Promise<void>;
  /** Replaces the operator's backup codes with these keyed hashes (the old ones go, used or not). */
  replaceBackupCodes(operatorId: string, hashes: string[], at: number): Promise<void>;
  /** Spends an unused backup code of the operator's, once; false when none matches. */
  useBackupCode(operatorId: string, hash: string, at: number): Promise<boolean>;
  remainingBackupCodes(operatorId: string): Promise<number>;
  /** The operator's live sessions (not ended, not expired, used within `idleSince`), the latest used first. */
  sessionsOf(operatorId: string, now: number, idleSince: number): Promise<OperatorSessionListRow[]>;
  /** Ends one of the operator's own sessions; false when they have no such live one. */
  endSessionOf(operatorId: string, id: string, at: number): Promise<boolean>;
  /** Ends every session of the operator but `keepId`; how many it ended. */
  endOtherSessions(operatorId: string, keepId: string, at: number): Promise<number>;
  /** Deletes challenges past their end and sessions ended or expired before `before`. */
  purgeExpired(now: number, before: number): Promise<void>;

  audit(e: OperatorAuditEntry, at: number): Promise<void>;
  auditPage(limit: number, offset: number): Promise<Paged<OperatorAuditRow>>;

  organizations(q: string, limit: number, offset: number): Promise<Paged<ConsoleOrganizationRow>>;
  organizationCounts(): Promise<{ total: number; disabled: number }>;
  mailQueue(status: "pending" | "failed" | null, limit: number, offset: number): Promise<Paged<ConsoleMailRow>>;
  /** A pending mail is due now (its backoff skipped); false when it is not pending. */
  retryMail(id: string, now: number): Promise<boolean>;
  /** Deletes a pending or failed mail; false when there is none such. */
  discardMail(id: string): Promise<boolean>;
  jobs(limit: number, offset: number): Promise<Paged<ConsoleJobRow>>;
  runningJobs(): Promise<number>;
  /** The database's size and its write-ahead log's, in bytes (null where the database will not say). */
  sizes(): Promise<{ database_bytes: number | null; wal_bytes: number | null }>;
  /**
   * The suite's server processes using this database, each by its pool's connections (PostgreSQL:
   * pg_stat_activity, where each process names its connections `workspace-suite:<pid>`); SQLite has
   * one server process, this one.
   */
  instances(): Promise<ConsoleInstanceRow[]>;
  /** The backup schedule the console saved (JSON, in the settings table); null when none was. */
  backupSchedule(): Promise<string | null>;
  setBackupSchedule(json: string): Promise<void>;
}

/** The settings row holding the console's backup schedule. */
export const BACKUP_SCHEDULE_KEY = "backup_schedule";

/** A search taken literally in `LIKE … ESCAPE '\\'` (PostgreSQL's default escape is the same): `%`, `_` and `\\` escaped. */
export const likePattern = (q: string): string => `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
