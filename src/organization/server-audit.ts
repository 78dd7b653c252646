import type { Logger } from "../kernel/logger";

/**
 * An entry of the server's own audit log: what the server's operator did to the server as a
 * whole (an organization deleted), which no organization's audit log can hold (the organization
 * is gone with its log). Today each entry is one structured log line (`msg: "server audit"`);
 * the operator console's server audit table is meant to receive the same entries through a
 * `ServerAudit` function of its own, passed where createContext passes this one.
 */
export interface ServerAuditEntry {
  /** What happened: `tenant.deleted`, `tenant.deletion_started`. */
  action: string;
  /** Who asked: `cli` (the command line), or the console's operator. */
  actor: string;
  /** The command as typed, without secrets, when it came from the command line. */
  command?: string;
  /** ms since the epoch. */
  at: number;
  detail: Record<string, unknown>;
}

export type ServerAudit = (entry: ServerAuditEntry) => void | Promise<void>;

/** The server audit entry as one log line: level info, `msg: "server audit"`, the entry's fields. */
export const serverAuditToLog = (log: Logger): ServerAudit => (e) =>
  log({ level: "info", msg: "server audit", action: e.action, actor: e.actor, ...(e.command ? { command: e.command } : {}), at: new Date(e.at).toISOString(), ...e.detail });

/** Several sinks as one (the log line, and the console's table once it exists). */
export const serverAuditTo = (...sinks: ServerAudit[]): ServerAudit => async (e) => {
  for (const sink of sinks) await sink(e);
};
