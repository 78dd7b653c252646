import { chmod, mkdir, readFile, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { newSecretToken } from "../kernel/ids";

/**
 * The final CSV export of a deleted organization, kept 7 days on the server's own disk. Each
 * export is a folder named by a random token (256 bits) under `<data folder>/deleted-organizations/`
 * (0700, files 0600): the token is the only way to name it, so whoever holds it (the operator who
 * ran the deletion; the operator console later) is the only one who can fetch it. `claim` hands
 * the files over once: it moves the folder away from its token name first, so a second claim of
 * the same token finds nothing. `sweep` removes every export older than 7 days.
 */
export const EXPORT_KEEP_MS = 7 * 86_400_000;
export const EXPORTS_FOLDER = "deleted-organizations";
export const EXPORT_KINDS = ["deals", "accounts", "contacts"] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];

export interface ExportManifest {
  token: string;
  tenant_id: string;
  subdomain: string;
  created_at: number;
  /** The file of each kind, inside the folder. */
  files: Record<ExportKind, string>;
}

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export function createDeletionExports(d: { dataDir: string; now: () => number }) {
  const root = join(d.dataDir, EXPORTS_FOLDER);
  const folderOf = (token: string) => join(root, token);

  /** A new, empty export folder and its manifest; the caller writes each kind's file into it. */
  async function create(tenantId: string, subdomain: string, token = newSecretToken()): Promise<{ dir: string; manifest: ExportManifest }> {
    await mkdir(root, { recursive: true, mode: 0o700 });
    await chmod(root, 0o700);
    const dir = folderOf(token);
    await mkdir(dir, { mode: 0o700 });
    const files = Object.fromEntries(EXPORT_KINDS.map((k) => [k, `${subdomain}-${k}.csv`])) as Record<ExportKind, string>;
    const manifest: ExportManifest = { token, tenant_id: tenantId, subdomain, created_at: d.now(), files };
    return { dir, manifest };
  }

  /** The manifest goes last: a folder without one is an export that never finished (swept like any other). */
  async function seal(dir: string, manifest: ExportManifest): Promise<void> {
    await writeFile(join(dir, "manifest.json"), JSON.stringify(manifest), { mode: 0o600 });
  }

  /** The export named by this token, untouched (the command line prints where it is); null when none. */
  async function find(token: string): Promise<{ dir: string; manifest: ExportManifest } | null> {
    if (!TOKEN.test(token)) return null;
    const dir = folderOf(token);
    const manifest = await readFile(join(dir, "manifest.json"), "utf8").then((t) => JSON.parse(t) as ExportManifest).catch(() => null);
    return manifest ? { dir, manifest } : null;
  }

  /**
   * Hands the export over once: the folder leaves its token name (so the token names nothing any
   * more) and the caller gets its files' paths and `done`, which removes them once it has read them.
   */
  async function claim(token: string): Promise<{ manifest: ExportManifest; paths: Record<ExportKind, string>; done: () => Promise<void> } | null> {
    const found = await find(token);
    if (!found) return null;
    const taken = join(root, `claimed-${newSecretToken()}`);
    try {
      await rename(found.dir, taken);
    } catch {
      return null; // claimed by someone else a moment before
    }
    const paths = Object.fromEntries(EXPORT_KINDS.map((k) => [k, join(taken, found.manifest.files[k])])) as Record<ExportKind, string>;
    return { manifest: found.manifest, paths, done: () => rm(taken, { recursive: true, force: true }) };
  }

  /** Removes exports (and claimed leftovers) older than 7 days; answers how many went. */
  async function sweep(): Promise<number> {
    const now = d.now();
    let n = 0;
    for (const name of await readdir(root).catch(() => [] as string[])) {
      const dir = join(root, name);
      const made = await readFile(join(dir, "manifest.json"), "utf8")
        .then((t) => (JSON.parse(t) as ExportManifest).created_at)
        .catch(async () => (await stat(dir).catch(() => null))?.mtimeMs ?? now);
      if (now - made >= EXPORT_KEEP_MS) {
        await rm(dir, { recursive: true, force: true });
        n++;
      }
    }
    return n;
  }

  return { root, newToken: newSecretToken, create, seal, find, claim, sweep };
}

export type DeletionExports = ReturnType<typeof createDeletionExports>;
