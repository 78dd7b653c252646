import { newSecretToken } from "../kernel/ids";
import { toIso, toIsoOrNull } from "../kernel/ids";
import { RequestValidationError } from "../kernel/errors";
import type { RequestInfo } from "../kernel/principal";
import type { ConsoleBackups } from "./model";
import { operatorErrors } from "./model";
import type { OperatorPrincipal, OperatorService } from "./service";

/** What the console needs of the server's backups (cli/backup-schedule.ts, wired by context.ts). */
export interface BackupsPort {
  unavailable: string | null;
  dir: string | null;
  list(): Array<{ name: string; at: number; bytes: number }>;
  start(by: string): { run: { name: string; started_at: number }; done: Promise<void> } | null;
  state(): {
    running: { name: string; by: string; started_at: number; bytes_done: number; bytes_total: number } | null;
    last: { name: string; by: string; ok: boolean; error: string | null; bytes: number | null; finished_at: number } | null;
  };
  pathOf(name: string): string | null;
  remove(name: string): boolean;
  schedule(): Promise<{ source: "console" | "environment" | "none"; enabled: boolean; at_utc: string | null; every_hours: number | null; keep: number | null; next_at: number | null }>;
  saveSchedule(s: { enabled: boolean; at_utc: string; keep: number }): Promise<void>;
}

/** A download link lives this long, and works once. */
export const BACKUP_LINK_MS = 10 * 60_000;

const KEYS_NOTE =
  "The keys are not in a backup (nor any secret in clear): keep a copy of the key file (<database>.keys) apart from the backups, and restore it beside the database.";

/**
 * The console's backups: the list, "Back up now" (a child process, never this thread or the
 * writer), a download handed over as the organization's export is (a link for one fetch), deletion
 * and the schedule. Every action is audited; deleting, downloading (a backup holds every
 * organization's data) and changing the schedule (its keep removes backups) need step-up.
 */
export function createConsoleBackups(d: { now: () => number; backups: BackupsPort; operators: OperatorService }) {
  const b = d.backups;
  /** One-time links: token → the backup and the operator it was handed to. In memory: backups are SQLite's, one server. */
  const links = new Map<string, { name: string; operatorId: string; expiresAt: number }>();
  const available = () => {
    if (b.unavailable) throw operatorErrors.backupsUnavailable(b.unavailable);
  };

  async function view(): Promise<ConsoleBackups> {
    const s = await b.schedule();
    const { running, last } = b.state();
    return {
      available: b.unavailable === null,
      note: b.unavailable ?? KEYS_NOTE,
      folder: b.dir,
      backups: b.list().map((x) => ({ name: x.name, bytes: x.bytes, created_at: toIso(x.at) })),
      running: running && { ...running, started_at: toIso(running.started_at) },
      last: last && { ...last, finished_at: toIso(last.finished_at) },
      schedule: { ...s, next_at: toIsoOrNull(s.next_at) },
    };
  }

  async function backUpNow(p: OperatorPrincipal, req: RequestInfo) {
    available();
    let started: ReturnType<BackupsPort["start"]>;
    try {
      started = b.start(p.email);
    } catch (e) {
      // The folder cannot be made or written (permissions, a file in its place): said, not a 500.
      throw operatorErrors.backupFolder(b.dir ?? "", e instanceof Error ? e.message : String(e));
    }
    if (!started) throw operatorErrors.backupRunning();
    await d.operators.audit(p, req, "backup.started", `backup:${started.run.name}`);
    return {
      name: started.run.name,
      started_at: toIso(started.run.started_at),
      detail: "The backup is being made in the background: the list shows its progress, and the file when it is checked and written.",
    };
  }

  async function remove(p: OperatorPrincipal, req: RequestInfo, name: string): Promise<void> {
    available();
    d.operators.requireRecentProof(p);
    if (!b.remove(name)) throw operatorErrors.backupNotFound();
    await d.operators.audit(p, req, "backup.deleted", `backup:${name}`);
  }

  async function link(p: OperatorPrincipal, req: RequestInfo, name: string) {
    available();
    d.operators.requireRecentProof(p);
    if (!b.pathOf(name)) throw operatorErrors.backupNotFound();
    const now = d.now();
    for (const [k, v] of links) if (v.expiresAt <= now) links.delete(k);
    const token = newSecretToken();
    const expiresAt = now + BACKUP_LINK_MS;
    links.set(token, { name, operatorId: p.operatorId, expiresAt });
    await d.operators.audit(p, req, "backup.download_link_created", `backup:${name}`);
    return { url: `/api/v1/operator/backup-downloads/${token}`, expires_at: toIso(expiresAt) };
  }

  /** The file, once, to the operator the link was handed to. */
  async function takeDownload(p: OperatorPrincipal, req: RequestInfo, token: string): Promise<{ name: string; path: string }> {
    const l = links.get(token);
    if (!l || l.expiresAt <= d.now() || l.operatorId !== p.operatorId) throw operatorErrors.downloadNotFound();
    links.delete(token);
    const path = b.pathOf(l.name);
    if (!path) throw operatorErrors.backupNotFound();
    await d.operators.audit(p, req, "backup.downloaded", `backup:${l.name}`);
    return { name: l.name, path };
  }

  async function saveSchedule(p: OperatorPrincipal, req: RequestInfo, body: { enabled: boolean; at_utc: string; keep: number }) {
    available();
    const at = body.at_utc.trim();
    if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(at)) {
      throw new RequestValidationError([{ loc: ["body", "at_utc"], msg: "Value error, give a time of day as HH:MM in UTC, such as 03:30", type: "value_error" }]);
    }
    d.operators.requireRecentProof(p);
    await b.saveSchedule({ enabled: body.enabled, at_utc: at, keep: body.keep });
    await d.operators.audit(p, req, "backup.schedule_changed", null, { enabled: body.enabled, at_utc: at, keep: body.keep });
    return view();
  }

  return { view, backUpNow, remove, link, takeDownload, saveSchedule };
}

export type ConsoleBackupsService = ReturnType<typeof createConsoleBackups>;
