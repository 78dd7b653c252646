import { open, rm } from "node:fs/promises";
import { join } from "node:path";
import { errors } from "../kernel/errors";
import type { Logger } from "../kernel/logger";
import type { TenantDeletionStore } from "./deletion-repo";
import { type DeletionExports, EXPORT_KINDS, type ExportKind, type ExportManifest } from "./deletion-exports";
import type { TenantsStore } from "./repo";
import type { ServerAudit } from "./server-audit";

/**
 * Deleting an organization: every row of it on either backend (mail, jobs, search counters and
 * its audit log included), after a final CSV export of its deals, accounts and contacts kept 7
 * days (deletion-exports.ts), with an entry in the server's audit log (server-audit.ts).
 *
 * 1. `begin`: one transaction disables the organization (every request to it answers 403
 *    tenant_disabled from then on) and writes the deletion's marker.
 * 2. The export is written (its token is kept in the marker first, so a half-written one is
 *    found and redone after a crash).
 * 3. Each table's rows go in batches, each its own short transaction sized from the time the
 *    last one took (aiming at BATCH_MS, far under the 50 ms any writer may hold), with a pause
 *    between them for everyone else's requests.
 * 4. The tenants row and the marker go together, last.
 * A process killed anywhere leaves the marker: `resumeAll` (run by `suite serve` at start, and by
 * `suite tenant delete` run again) picks the work up from where the rows stand.
 */
export interface DeletionDeps {
  now: () => number;
  log: Logger;
  tenants: TenantsStore;
  store: TenantDeletionStore;
  exports: DeletionExports;
  /** One kind's CSV, as the organization's admins download it (crm/export-import). */
  exportCsv: (tenantId: string, subdomain: string, kind: ExportKind) => Promise<ReadableStream<Uint8Array>>;
  serverAudit: ServerAudit;
  /** What a batch aims to hold the writer for, in ms (default BATCH_MS). */
  batchMs?: number;
}

/** Who asked for the deletion: `cli` with the command, or the console's operator. */
export interface DeletionActor {
  actor: string;
  command?: string;
}

interface DeletionState {
  subdomain: string;
  name: string;
  actor: string;
  command?: string;
  started_at: number;
  /**
   * Drawn when the deletion begins (the operator console hands it over at once, before the export
   * exists); its manifest (written last) says the export is complete.
   */
  export_token: string | null;
}

export interface DeletionResult {
  tenantId: string;
  subdomain: string;
  /** The export's folder and files; null when the run stopped before writing it. */
  export: { token: string; dir: string; files: Record<ExportKind, string> } | null;
  rows: number;
  batches: number;
  /** False when the run stopped early (maxBatches): the marker stays and a later run resumes. */
  finished: boolean;
}

export const BATCH_MS = 15;
const FIRST_BATCH = 64;
const MAX_BATCH = 20_000;

const pause = () => new Promise<void>((r) => setTimeout(r, 0));

export function createOrganizationDeletion(d: DeletionDeps) {
  const target = d.batchMs ?? BATCH_MS;
  /** One run per organization in this process: a second call waits for the first. */
  const running = new Map<string, Promise<DeletionResult>>();

  /** Marks the organization (disabled, marker written): from here on it answers 403 and a restart finishes the deletion. */
  async function begin(subdomain: string, by: DeletionActor): Promise<string> {
    return (await start(subdomain, by)).tenantId;
  }

  /** `begin`, answering the deletion's state too (an earlier, unfinished deletion's when there is one). */
  async function start(subdomain: string, by: DeletionActor): Promise<{ tenantId: string; state: DeletionState; begun: boolean }> {
    const tenant = await d.tenants.bySubdomain(subdomain.trim().toLowerCase());
    if (!tenant) throw errors.tenantNotFound();
    const pending = (await d.store.pending()).find((p) => p.tenantId === tenant.id);
    if (pending) return { tenantId: tenant.id, state: JSON.parse(pending.state) as DeletionState, begun: false };
    const state: DeletionState = {
      subdomain: tenant.subdomain, name: tenant.name, actor: by.actor, command: by.command, started_at: d.now(), export_token: d.exports.newToken(),
    };
    if (!(await d.store.begin(tenant.id, JSON.stringify(state), d.now()))) throw errors.tenantNotFound();
    await d.serverAudit({ action: "tenant.deletion_started", actor: by.actor, command: by.command, at: d.now(), detail: { tenant_id: tenant.id, subdomain: tenant.subdomain } });
    return { tenantId: tenant.id, state, begun: true };
  }

  /** Writes one stream to a new 0600 file, a chunk at a time. */
  async function writeFileFrom(path: string, stream: ReadableStream<Uint8Array>): Promise<void> {
    const file = await open(path, "wx", 0o600);
    try {
      for await (const chunk of stream as unknown as AsyncIterable<Uint8Array | string>) await (typeof chunk === "string" ? file.write(chunk) : file.write(chunk));
      await file.sync();
    } finally {
      await file.close();
    }
  }

  async function ensureExport(tenantId: string, state: DeletionState): Promise<ExportManifest> {
    if (state.export_token) {
      const found = await d.exports.find(state.export_token);
      if (found) return found.manifest;
      // Begun and never finished (the manifest is written last): start it again, under the same token.
      await rm(join(d.exports.root, state.export_token), { recursive: true, force: true });
    }
    const { dir, manifest } = await d.exports.create(tenantId, state.subdomain, state.export_token ?? undefined);
    if (state.export_token !== manifest.token) {
      state.export_token = manifest.token;
      await d.store.update(tenantId, JSON.stringify(state));
    }
    for (const kind of EXPORT_KINDS) await writeFileFrom(join(dir, manifest.files[kind]), await d.exportCsv(tenantId, state.subdomain, kind));
    await d.exports.seal(dir, manifest);
    return manifest;
  }

  /** Deletes every table's rows once, in batches; false when maxBatches stopped it. */
  async function walkTables(tenantId: string, result: DeletionResult, opts: { maxBatches?: number }): Promise<boolean> {
    for (const table of await d.store.tables()) {
      let from = 0;
      let limit = FIRST_BATCH;
      for (;;) {
        if (opts.maxBatches !== undefined && result.batches >= opts.maxBatches) return false;
        const started = performance.now();
        const r = await d.store.deleteSome(tenantId, table, from, limit);
        const ms = performance.now() - started;
        result.batches++;
        result.rows += r.deleted;
        // Sized from the last batch: twice as many while well under the aim, half as many above it.
        if (ms < target / 2) limit = Math.min(limit * 2, MAX_BATCH);
        else if (ms > target) limit = Math.max(1, Math.floor(limit / 2));
        if (r.next === null) break;
        from = r.next;
        await pause();
      }
    }
    return true;
  }

  async function work(tenantId: string, stateJson: string, opts: { maxBatches?: number }): Promise<DeletionResult> {
    const state = JSON.parse(stateJson) as DeletionState;
    const result: DeletionResult = { tenantId, subdomain: state.subdomain, export: null, rows: 0, batches: 0, finished: false };
    const manifest = await ensureExport(tenantId, state);
    const dir = join(d.exports.root, manifest.token);
    result.export = { token: manifest.token, dir, files: Object.fromEntries(EXPORT_KINDS.map((k) => [k, join(dir, manifest.files[k])])) as Record<ExportKind, string> };
    // A second walk finds what a write already under way when the organization was disabled (an
    // import's batch) added behind the first; it repeats until a walk finds nothing (at most 3).
    for (let walk = 0, found = -1; found !== 0 && walk < 3; walk++) {
      const before = result.rows;
      if (!(await walkTables(tenantId, result, opts))) return result;
      found = result.rows - before;
    }
    await d.store.finish(tenantId);
    result.finished = true;
    await d.serverAudit({
      action: "tenant.deleted",
      actor: state.actor,
      command: state.command,
      at: d.now(),
      detail: { tenant_id: tenantId, subdomain: state.subdomain, name: state.name, rows: result.rows, started_at: new Date(state.started_at).toISOString(), export: dir },
    });
    return result;
  }

  /** Runs (or resumes) a begun deletion; `maxBatches` stops it early (tests: a crash half-way). */
  function run(tenantId: string, opts: { maxBatches?: number } = {}): Promise<DeletionResult> {
    const now = running.get(tenantId);
    if (now) return now;
    const p = (async () => {
      const marker = (await d.store.pending()).find((m) => m.tenantId === tenantId);
      if (!marker) throw errors.tenantNotFound();
      return work(tenantId, marker.state, opts);
    })().finally(() => running.delete(tenantId));
    running.set(tenantId, p);
    return p;
  }

  /** Deletes the organization with this subdomain (begin, export, batches, finish). */
  async function deleteOrganization(subdomain: string, by: DeletionActor): Promise<DeletionResult> {
    return run(await begin(subdomain, by));
  }

  /** Finishes every deletion a stopped process left (the server runs it at start). */
  async function resumeAll(): Promise<DeletionResult[]> {
    const out: DeletionResult[] = [];
    for (const m of await d.store.pending()) {
      d.log({ level: "info", msg: "resuming organization deletion", tenant_id: m.tenantId });
      out.push(await run(m.tenantId));
    }
    return out;
  }

  /** Deletions begun and not finished: tenant id and subdomain. */
  async function pending(): Promise<Array<{ tenantId: string; subdomain: string }>> {
    return (await d.store.pending()).map((m) => ({ tenantId: m.tenantId, subdomain: (JSON.parse(m.state) as DeletionState).subdomain }));
  }

  return { begin, start, run, deleteOrganization, resumeAll, pending, exports: d.exports };
}

export type OrganizationDeletion = ReturnType<typeof createOrganizationDeletion>;
