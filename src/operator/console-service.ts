import { toIso, toIsoOrNull } from "../kernel/ids";
import { type Page, pageOf } from "../kernel/paging";
import { RequestValidationError } from "../kernel/errors";
import type { RequestInfo } from "../kernel/principal";
import type { OperatorCommand } from "../security-log/operator";
import type { ConsoleAuditRow, ConsoleDeletion, ConsoleJob, ConsoleMail, ConsoleOrganization, ConsoleServer } from "./model";
import { operatorErrors } from "./model";
import type { OperatorStore } from "./repo";
import type { OperatorPrincipal, OperatorService } from "./service";
import type { RequestRate } from "./request-rate";
import { type TarEntry, tarStream } from "./tar";

/** What the console needs of the organizations' deletion (src/organization/delete.ts), as context.ts wires it. */

/**
 * What an organization takes in the database, estimated from counters the list already reads (an
 * exact figure per organization would walk its rows: no database keeps sizes by tenant). Measured
 * on a seeded SQLite file: 2,043 MB for 1,000,000 deals with their accounts, contacts, search
 * index and counters, about 2 KB a deal. A member's sessions, audit rows and mails are taken as
 * 16 KB (not measured: members are few beside deals).
 */
export const STORAGE_PER_DEAL = 2_048;
export const STORAGE_PER_MEMBER = 16_384;
export const storageEstimate = (deals: number, members: number): number => deals * STORAGE_PER_DEAL + members * STORAGE_PER_MEMBER;

export interface ConsoleDeletionDeps {
  tenantById: (id: string) => Promise<{ id: string; subdomain: string } | null>;
  /** Marks the organization (403 from then on) and answers the deletion's state; an unfinished one's when there is one. */
  start: (subdomain: string, by: { actor: string; command: string }) => Promise<{ tenantId: string; state: { started_at: number; export_token: string | null } }>;
  /** The batches, export first; runs after the answer. */
  runInBackground: (tenantId: string) => void;
  pending: () => Promise<Array<{ tenantId: string; exportToken: string | null }>>;
  claimExport: (token: string) => Promise<{ manifest: { subdomain: string; created_at: number; files: Record<string, string> }; paths: Record<string, string>; done: () => Promise<void> } | null>;
}

export interface ConsoleDeps {
  now: () => number;
  store: OperatorStore;
  operators: OperatorService;
  /** What `suite tenant disable|enable` does (organization/operator.ts). */
  setDisabled: (subdomain: string, disabled: boolean, by: OperatorCommand) => Promise<{ tenant: { subdomain: string }; changed: boolean }>;
  mailBacklog: () => Promise<{ pending: number; sending: number; failed: number }>;
  /** A plain mail into the outbox, on its own (the test mail). */
  enqueueMail: (m: { tenantId: null; kind: string; recipient: string; subject: string; text: string; html: string; link: null }) => Promise<string>;
  /** Wakes the mail sender after a retry (a no-op without SMTP). */
  kickMail: () => void;
  requestRate: RequestRate;
  server: () => Promise<Omit<ConsoleServer, "database_bytes" | "wal_bytes" | "instances">>;
  deletion: ConsoleDeletionDeps;
}

/**
 * A recipient as the console shows it: the first character of the local part and the whole
 * domain. The operator can tell a mail's organization and purpose without reading whole
 * addresses of other people's members on a screen (`suite mail list`, on the machine, shows them).
 */
export const maskRecipient = (address: string): string => {
  const at = address.lastIndexOf("@");
  if (at < 1) return "•••";
  return `${address[0]}•••${address.slice(at)}`;
};

type Paging = { page: number; size: number };
const offsetOf = (p: Paging) => (p.page - 1) * p.size;

/** The console's views and actions; every action is audited, destructive ones need a recent password. */
export function createConsoleService(d: ConsoleDeps) {
  async function overview() {
    const [orgs, mail, running] = await Promise.all([d.store.organizationCounts(), d.mailBacklog(), d.store.runningJobs()]);
    return {
      organizations: orgs.total,
      organizations_disabled: orgs.disabled,
      mail_pending: mail.pending + mail.sending,
      mail_failed: mail.failed,
      jobs_running: running,
      requests_per_minute: d.requestRate.series(),
      hours: d.requestRate.hours().map((h) => ({ ...h, start: toIso(h.start) })),
    };
  }

  async function organizations(q: string, paging: Paging): Promise<Page<ConsoleOrganization>> {
    const [r, deleting] = await Promise.all([d.store.organizations(q, paging.size, offsetOf(paging)), d.deletion.pending()]);
    const beingDeleted = new Set(deleting.map((p) => p.tenantId));
    const items = r.rows.map((o) => ({
      being_deleted: beingDeleted.has(o.id),
      id: o.id, name: o.name, subdomain: o.subdomain, members: Number(o.members), deals: Number(o.deals),
      storage_estimate_bytes: storageEstimate(Number(o.deals), Number(o.members)),
      created_at: toIso(o.created_at), last_activity_at: toIsoOrNull(o.last_activity_at), disabled_at: toIsoOrNull(o.disabled_at),
    }));
    return pageOf(items, r.total, paging.page, paging.size);
  }

  /** Disable or enable: step-up first, then what `suite tenant disable|enable` does, audited in both logs. */
  async function setDisabled(p: OperatorPrincipal, req: RequestInfo, subdomain: string, disabled: boolean) {
    d.operators.requireRecentProof(p);
    const r = await d.setDisabled(subdomain, disabled, { command: `operator console: ${disabled ? "disable" : "enable"}`, console: true });
    await d.operators.audit(p, req, disabled ? "organization.disabled" : "organization.enabled", `organization:${r.tenant.subdomain}`, { changed: r.changed });
    return { subdomain: r.tenant.subdomain, disabled, changed: r.changed };
  }

  /**
   * Deleting: step-up, the subdomain typed again, then the organization is marked (403 from now
   * on) and its rows go in the background. The server audit entries (`tenant.deletion_started`,
   * `tenant.deleted`) land in operator_audit through context.ts, as the command line's do.
   */
  async function deleteOrganization(p: OperatorPrincipal, id: string, typed: string): Promise<ConsoleDeletion> {
    d.operators.requireRecentProof(p);
    const tenant = await d.deletion.tenantById(id);
    if (!tenant) throw operatorErrors.organizationNotFound();
    if (typed.trim().toLowerCase() !== tenant.subdomain) {
      throw new RequestValidationError([{ loc: ["body", "subdomain"], msg: `Value error, type the organization's subdomain, ${tenant.subdomain}, to confirm`, type: "value_error" }]);
    }
    const r = await d.deletion.start(tenant.subdomain, { actor: p.email, command: "operator console: delete" });
    d.deletion.runInBackground(r.tenantId);
    return {
      id: r.tenantId, subdomain: tenant.subdomain, status: "deleting", started_at: toIso(r.state.started_at),
      export_url: `/api/v1/operator/exports/${r.state.export_token ?? ""}`,
    };
  }

  /** The final export, once: 409 while its deletion still runs (a resumed run could still rewrite it), 404 once taken. */
  async function takeExport(p: OperatorPrincipal, req: RequestInfo, token: string): Promise<{ name: string; stream: ReadableStream<Uint8Array> }> {
    if ((await d.deletion.pending()).some((m) => m.exportToken === token)) throw operatorErrors.exportNotReady();
    const claimed = await d.deletion.claimExport(token);
    if (!claimed) throw operatorErrors.exportNotFound();
    const { manifest, paths } = claimed;
    await d.operators.audit(p, req, "organization.export_downloaded", `organization:${manifest.subdomain}`);
    const entries: TarEntry[] = Object.keys(paths).map((k) => ({ name: `${manifest.subdomain}/${manifest.files[k]}`, path: paths[k]! }));
    return { name: `${manifest.subdomain}-export.tar`, stream: tarStream(entries, manifest.created_at, claimed.done) };
  }

  async function mail(status: "pending" | "failed" | null, paging: Paging): Promise<Page<ConsoleMail>> {
    const r = await d.store.mailQueue(status, paging.size, offsetOf(paging));
    const items = r.rows.map((m) => ({
      id: m.id, organization: m.subdomain, kind: m.kind, recipient: maskRecipient(m.recipient), subject: m.subject, status: m.status,
      attempts: Number(m.attempts), next_attempt_at: toIso(m.next_attempt_at), last_error: m.last_error, created_at: toIso(m.created_at),
    }));
    return pageOf(items, r.total, paging.page, paging.size);
  }

  /** A pending mail is sent at once, skipping its backoff. A failed one has lost its body (it held a live link): it can only be discarded. */
  async function retryMail(p: OperatorPrincipal, req: RequestInfo, id: string): Promise<void> {
    if (!(await d.store.retryMail(id, d.now()))) throw operatorErrors.mailNotFound();
    await d.operators.audit(p, req, "mail.retried", `mail:${id}`);
    d.kickMail();
  }

  /** Deleting a waiting mail is destructive (its link is never delivered): step-up first. */
  async function discardMail(p: OperatorPrincipal, req: RequestInfo, id: string): Promise<void> {
    d.operators.requireRecentProof(p);
    if (!(await d.store.discardMail(id))) throw operatorErrors.mailNotFound();
    await d.operators.audit(p, req, "mail.discarded", `mail:${id}`);
  }

  /** A test mail through the outbox, as every mail goes: the mail queue then shows whether the server sent it. */
  async function sendTestMail(p: OperatorPrincipal, req: RequestInfo, toIn: string): Promise<string> {
    const to = toIn.trim();
    if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(to)) {
      throw new RequestValidationError([{ loc: ["body", "to"], msg: "Value error, give an email address, such as you@example.com", type: "value_error" }]);
    }
    const text = "This is a test mail from your Workspace Suite server's operator console. If you read it, the server can send mail.";
    const id = await d.enqueueMail({ tenantId: null, kind: "test", recipient: to, subject: "Test mail from Workspace Suite", text, html: `<p>${text}</p>`, link: null });
    await d.operators.audit(p, req, "mail.test_sent", `mail:${id}`, { recipient: maskRecipient(to) });
    d.kickMail();
    return id;
  }

  async function jobs(paging: Paging): Promise<Page<ConsoleJob>> {
    const r = await d.store.jobs(paging.size, offsetOf(paging));
    const items = r.rows.map((j) => ({
      id: j.id, organization: j.subdomain, kind: j.kind, status: j.status, total: Number(j.total), done: Number(j.done), error_count: Number(j.error_count),
      created_at: toIso(j.created_at), finished_at: toIsoOrNull(j.finished_at),
    }));
    return pageOf(items, r.total, paging.page, paging.size);
  }

  async function server(): Promise<ConsoleServer> {
    const [base, sizes, seen] = await Promise.all([d.server(), d.store.sizes(), d.store.instances()]);
    const instances = seen.map((i) => ({ name: i.name, address: i.address, connections: i.connections, connected_since: toIso(i.since), this_instance: i.mine }));
    return { ...base, database_bytes: sizes.database_bytes === null ? null : Number(sizes.database_bytes), wal_bytes: sizes.wal_bytes === null ? null : Number(sizes.wal_bytes), instances };
  }

  async function audit(paging: Paging): Promise<Page<ConsoleAuditRow>> {
    const r = await d.store.auditPage(paging.size, offsetOf(paging));
    const items = r.rows.map((a) => ({
      id: Number(a.id), operator: a.operator_email, action: a.action, target: a.target, ip: a.ip, user_agent: a.user_agent,
      detail: JSON.parse(a.detail || "{}") as Record<string, unknown>, created_at: toIso(a.created_at),
    }));
    return pageOf(items, r.total, paging.page, paging.size);
  }

  return { overview, organizations, setDisabled, deleteOrganization, takeExport, mail, retryMail, discardMail, sendTestMail, jobs, server, audit };
}

export type ConsoleService = ReturnType<typeof createConsoleService>;
