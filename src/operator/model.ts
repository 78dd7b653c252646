import { type Static, t } from "elysia";
import { AppError, BEARER } from "../kernel/errors";
import { PASSWORD_MAX, PASSWORD_MIN } from "../security/passwords";

/** The operator's console's bodies and answers: the one declaration of each. */

export const OperatorLoginBody = t.Object({
  email: t.String({ minLength: 3, maxLength: 254 }),
  password: t.String({ minLength: 1, maxLength: PASSWORD_MAX }),
});
export const OperatorChallenge = t.Object({ requires_2fa: t.Literal(true), temp_token: t.String() });
export const OperatorVerifyBody = t.Object({
  temp_token: t.String({ minLength: 1, maxLength: 200 }),
  code: t.String({ minLength: 6, maxLength: 10 }),
});
export const OperatorToken = t.Object({ access_token: t.String(), token_type: t.Literal("bearer"), expires_at: t.String({ format: "date-time" }) });
export const OperatorReauthBody = t.Object({ password: t.String({ minLength: 1, maxLength: PASSWORD_MAX }) });
export const OperatorMe = t.Object({
  email: t.String(),
  session_expires_at: t.String({ format: "date-time" }),
  /** When the last password proof stops counting for destructive actions. */
  step_up_until: t.String({ format: "date-time" }),
  /** Unused backup codes left (each works once at the sign-in's code step). */
  backup_codes_left: t.Integer(),
});
export const OperatorBackupCodes = t.Object({ codes: t.Array(t.String()), detail: t.String() });

/** One of the signed-in operator's own live sessions. */
export const OperatorSession = t.Object({
  id: t.String(),
  created_at: t.String({ format: "date-time" }),
  last_used_at: t.String({ format: "date-time" }),
  expires_at: t.String({ format: "date-time" }),
  ip: t.Union([t.String(), t.Null()]),
  user_agent: t.Union([t.String(), t.Null()]),
  /** The session this request was made with. */
  current: t.Boolean(),
});
export const OperatorSessions = t.Object({ items: t.Array(OperatorSession) });
export const OperatorSessionPath = t.Object({ id: t.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9_-]+$" }) });
export const OperatorRevokedOthers = t.Object({ detail: t.String(), ended: t.Integer(), at: t.String({ format: "date-time" }) });

export const ConsoleOrganization = t.Object({
  id: t.String(),
  name: t.String(),
  subdomain: t.String(),
  members: t.Integer(),
  deals: t.Integer(),
  /** Bytes the organization takes in the database, estimated from its deals and members (see STORAGE_PER_DEAL). */
  storage_estimate_bytes: t.Integer(),
  created_at: t.String({ format: "date-time" }),
  last_activity_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
  disabled_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
  /** True while its deletion runs (it answers 403 to everyone, and goes from the list when done). */
  being_deleted: t.Boolean(),
});
export const ConsoleOrganizationStatus = t.Object({ subdomain: t.String(), disabled: t.Boolean(), changed: t.Boolean() });

export const ConsoleMail = t.Object({
  id: t.String(),
  organization: t.Union([t.String(), t.Null()]),
  kind: t.String(),
  /** Masked: the first character of the local part and the domain (`a•••@example.com`). */
  recipient: t.String(),
  subject: t.String(),
  status: t.Union([t.Literal("pending"), t.Literal("sending"), t.Literal("failed")]),
  attempts: t.Integer(),
  next_attempt_at: t.String({ format: "date-time" }),
  last_error: t.Union([t.String(), t.Null()]),
  created_at: t.String({ format: "date-time" }),
});

export const ConsoleJob = t.Object({
  id: t.String(),
  organization: t.String(),
  kind: t.String(),
  status: t.String(),
  total: t.Integer(),
  done: t.Integer(),
  error_count: t.Integer(),
  created_at: t.String({ format: "date-time" }),
  finished_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
});

export const ConsoleAuditRow = t.Object({
  id: t.Integer(),
  operator: t.Union([t.String(), t.Null()]),
  action: t.String(),
  target: t.Union([t.String(), t.Null()]),
  ip: t.Union([t.String(), t.Null()]),
  user_agent: t.Union([t.String(), t.Null()]),
  detail: t.Record(t.String(), t.Unknown()),
  created_at: t.String({ format: "date-time" }),
});

export const ConsoleOverview = t.Object({
  organizations: t.Integer(),
  organizations_disabled: t.Integer(),
  mail_pending: t.Integer(),
  mail_failed: t.Integer(),
  jobs_running: t.Integer(),
  /** This instance's requests in each of the last minutes, oldest first (up to 24 hours; restarts empty). */
  requests_per_minute: t.Array(t.Integer()),
  /** This instance's last 24 hours, hour by hour, oldest first (the current hour last; restarts empty). */
  hours: t.Array(
    t.Object({
      start: t.String({ format: "date-time" }),
      requests: t.Integer(),
      /** Answers with a 5xx status. */
      errors: t.Integer(),
      /** The slowest 1 % took at most this long (a bucket's bound: 1, 2, 3, 5, 7.5 … 10000 ms); null without requests. */
      p99_ms: t.Union([t.Number(), t.Null()]),
      sign_ins: t.Integer(),
      /** Sign-in steps refused for a wrong password or code (limited ones are not counted here). */
      sign_in_failures: t.Integer(),
    }),
  ),
});

export const ConsoleSetting = t.Object({
  name: t.String(),
  /** The value in effect; a secret's is never shown: only whether it is set. */
  value: t.String(),
  secret: t.Boolean(),
});
export const ConsoleServer = t.Object({
  version: t.String(),
  uptime_seconds: t.Integer(),
  database: t.Union([t.Literal("sqlite"), t.Literal("postgres")]),
  database_bytes: t.Union([t.Integer(), t.Null()]),
  wal_bytes: t.Union([t.Integer(), t.Null()]),
  key_file_present: t.Boolean(),
  settings: t.Array(ConsoleSetting),
  /** The suite's processes using the database (on PostgreSQL each instance, by its connections; on SQLite this one). */
  instances: t.Array(
    t.Object({
      name: t.String(),
      address: t.Union([t.String(), t.Null()]),
      connections: t.Integer(),
      connected_since: t.String({ format: "date-time" }),
      this_instance: t.Boolean(),
    }),
  ),
});

/** Deleting an organization: its subdomain typed again, so a wrong row is never deleted. */
export const ConsoleDeleteBody = t.Object({ subdomain: t.String({ minLength: 1, maxLength: 63 }) });
export const ConsoleDeletion = t.Object({
  id: t.String(),
  subdomain: t.String(),
  status: t.Literal("deleting"),
  started_at: t.String({ format: "date-time" }),
  /** Where the final export (deals, accounts, contacts as CSV, in one tar file) is fetched, once, after the deletion ends. */
  export_url: t.String(),
});
/** A test mail's recipient: checked by the console (a 422 sentence), not by a format TypeBox would word. */
export const ConsoleTestMailBody = t.Object({ to: t.String({ maxLength: 254 }) });
export const OrganizationIdPath = t.Object({ id: t.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9_-]+$" }) });
export const ExportPath = t.Object({ token: t.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9_-]+$" }) });

/** A backup file in the backup folder (only names the suite makes). */
export const ConsoleBackup = t.Object({ name: t.String(), bytes: t.Integer(), created_at: t.String({ format: "date-time" }) });
export const ConsoleBackupRun = t.Object({
  name: t.String(),
  /** `schedule`, or the operator's email who pressed "Back up now". */
  by: t.String(),
  started_at: t.String({ format: "date-time" }),
  /** The copy written so far against the database's size when it began; the integrity check follows the copy. */
  bytes_done: t.Integer(),
  bytes_total: t.Integer(),
});
export const ConsoleBackupOutcome = t.Object({
  name: t.String(),
  by: t.String(),
  ok: t.Boolean(),
  error: t.Union([t.String(), t.Null()]),
  bytes: t.Union([t.Integer(), t.Null()]),
  finished_at: t.String({ format: "date-time" }),
});
export const ConsoleBackupSchedule = t.Object({
  /** Where the schedule comes from: the console's saved one wins over SUITE_BACKUP_DIR/_EVERY/_KEEP. */
  source: t.Union([t.Literal("console"), t.Literal("environment"), t.Literal("none")]),
  enabled: t.Boolean(),
  /** Daily at this time, UTC (the console's); null: every `every_hours` (the environment's). */
  at_utc: t.Union([t.String(), t.Null()]),
  every_hours: t.Union([t.Number(), t.Null()]),
  keep: t.Union([t.Integer(), t.Null()]),
  next_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
});
export const ConsoleBackups = t.Object({
  /** false on PostgreSQL and for an in-memory database: `note` says what to do instead. */
  available: t.Boolean(),
  note: t.String(),
  folder: t.Union([t.String(), t.Null()]),
  backups: t.Array(ConsoleBackup),
  running: t.Union([ConsoleBackupRun, t.Null()]),
  last: t.Union([ConsoleBackupOutcome, t.Null()]),
  schedule: ConsoleBackupSchedule,
});
export const ConsoleBackupStarted = t.Object({ name: t.String(), started_at: t.String({ format: "date-time" }), detail: t.String() });
/** Daily at `at_utc` (HH:MM, UTC), keeping the newest `keep`; checked by the console (a 422 sentence). */
export const ConsoleBackupScheduleBody = t.Object({
  enabled: t.Boolean(),
  at_utc: t.String({ maxLength: 5 }),
  keep: t.Integer({ minimum: 1, maximum: 365 }),
});
export const ConsoleBackupLink = t.Object({ url: t.String(), expires_at: t.String({ format: "date-time" }) });
export const BackupPath = t.Object({ name: t.String({ minLength: 1, maxLength: 200, pattern: "^[A-Za-z0-9._-]+$" }) });

export type ConsoleBackups = Static<typeof ConsoleBackups>;
export type ConsoleOrganization = Static<typeof ConsoleOrganization>;
export type ConsoleDeletion = Static<typeof ConsoleDeletion>;
export type ConsoleMail = Static<typeof ConsoleMail>;
export type ConsoleJob = Static<typeof ConsoleJob>;
export type ConsoleAuditRow = Static<typeof ConsoleAuditRow>;
export type ConsoleServer = Static<typeof ConsoleServer>;
export type ConsoleSetting = Static<typeof ConsoleSetting>;

export const operatorErrors = {
  invalidCode: () => new AppError(401, "invalid_2fa_code", "The code is not valid: type the six digits your authenticator app shows now.", BEARER),
  stepUpRequired: () =>
    new AppError(403, "reauthentication_required", "Confirm your password first: this action needs a sign-in from the last 10 minutes."),
  notOnOrganizationHost: () => new AppError(404, "not_found", "Not found."),
  mailNotFound: () => new AppError(404, "mail_not_found", "No such mail is waiting or failed: it may have been sent or discarded already."),
  badEmail: () => new AppError(422, "invalid_email", "Give the operator's email address, such as ops@example.com."),
  passwordLength: () => new AppError(422, "invalid_password", `The password must have ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`),
  passwordCommon: (why: string) => new AppError(422, "password_too_common", why),
  organizationNotFound: () => new AppError(404, "tenant_not_found", "No organization has this id: it may have been deleted already."),
  exportNotFound: () => new AppError(404, "export_not_found", "No export has this link: it was downloaded already, or it is older than 7 days."),
  exportNotReady: () => new AppError(409, "export_not_ready", "The organization is still being deleted: try the link again in a minute."),
  backupsUnavailable: (why: string) => new AppError(409, "backups_unavailable", why),
  backupFolder: (dir: string, why: string) =>
    new AppError(409, "backup_folder_unusable", `The backup folder ${dir} cannot be used (${why}): let the server's user write there, or set SUITE_BACKUP_DIR to another folder.`),
  backupRunning: () => new AppError(409, "backup_running", "A backup is being made now: wait for it to finish, then try again."),
  backupNotFound: () => new AppError(404, "backup_not_found", "No backup has this name: it may have been deleted, or removed by the schedule's keep."),
  downloadNotFound: () => new AppError(404, "download_not_found", "This download link was used already or is older than 10 minutes: ask for a new one."),
  sessionNotFound: () => new AppError(404, "session_not_found", "You have no such session open: it may have ended already."),
  taken: (email: string) => new AppError(409, "operator_exists", `An operator with the email ${email} already exists.`),
};

/** What an action answers: a sentence saying what happened, and when. */
export const OperatorDone = t.Object({ detail: t.String(), at: t.String({ format: "date-time" }) });
export const OrganizationPath = t.Object({ subdomain: t.String({ minLength: 1, maxLength: 63, pattern: "^[A-Za-z0-9-]+$" }) });
export const MailPath = t.Object({ id: t.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9_-]+$" }) });
