import { randomBytes } from "node:crypto";
import { closeSync, copyFileSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { ConfigError } from "../config";
import { tightenFile } from "../db/database";

/**
 * The server's generated keys live in a file beside the database, `<db>.keys` (JSON, 0600), not in
 * it: a copy of the database (a backup, a stolen disk image of the data alone) then forges no
 * token and opens no 2FA secret. Earlier releases kept them in the `settings` table; the first
 * start of this one moves them out (file first, then the rows, so a crash in between is re-run).
 */
export const KEY_NAMES = ["jwt_secret", "refresh_key", "encryption_key"] as const;
export type KeyName = (typeof KEY_NAMES)[number];
export type ServerKeys = Record<KeyName, string>;

/** Where the keys of the database at `dbFile` are kept. */
export const keyFileOf = (dbFile: string): string => `${dbFile}.keys`;

const MIN_KEY_LENGTH = 32;
const newKey = () => randomBytes(48).toString("base64url");
export const generateKeys = (): ServerKeys => ({ jwt_secret: newKey(), refresh_key: newKey(), encryption_key: newKey() });

/** What the key file needs of the database: the keys earlier releases stored, and whether it holds accounts. */
export interface StoredKeys {
  stored(names: readonly string[]): Record<string, string>;
  forget(names: readonly string[]): void;
  holdsAccounts(): boolean;
}

const isComplete = (o: Record<string, unknown>): o is ServerKeys =>
  KEY_NAMES.every((k) => typeof o[k] === "string" && (o[k] as string).length >= MIN_KEY_LENGTH);

function fsyncDir(dir: string): void {
  try {
    const fd = openSync(dir, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Not every filesystem lets a directory be opened for fsync; the file itself is synced.
  }
}

/** A private temp file beside `path` holding `keys`, on disk. */
function writeTemp(path: string, keys: ServerKeys): string {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  const fd = openSync(tmp, "wx", 0o600);
  try {
    writeSync(fd, `${JSON.stringify(keys, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return tmp;
}

/**
 * Creates the key file holding `keys`, unless it exists: then the keys already there win (two
 * servers, or `suite migrate` beside one, starting at once must agree on one set). Written to a
 * temp file and fsynced first, then hard-linked into place, which fails if the name exists: so
 * the file appears complete or not at all, and only once. Answers the keys the file holds.
 */
export function createKeyFile(path: string, keys: ServerKeys): ServerKeys {
  const tmp = writeTemp(path, keys);
  try {
    linkSync(tmp, path);
    fsyncDir(dirname(path));
    return keys;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return readKeyFile(path)!;
    // A filesystem without hard links: exclusive creation in place (a reader racing it retries).
    if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP" || code === "ENOSYS") return createInPlace(path, keys);
    throw e;
  } finally {
    unlinkSync(tmp);
  }
}

function createInPlace(path: string, keys: ServerKeys): ServerKeys {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return readKeyFile(path)!;
    throw e;
  }
  try {
    writeSync(fd, `${JSON.stringify(keys, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  fsyncDir(dirname(path));
  return keys;
}

/** The keys in the file, or null when there is none. Missing keys (an operator's `{}`) are added. */
export function readKeyFile(path: string, attempt = 0): ServerKeys | null {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new ConfigError(`cannot read the key file ${path}: ${(e as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    // Being written by a peer right now (only where hard links are missing): look again shortly.
    if (attempt < 20) {
      Bun.sleepSync(50);
      return readKeyFile(path, attempt + 1);
    }
    throw new ConfigError(`the key file ${path} is not a JSON object of keys; restore it from your copy`);
  }
  const o = parsed as Record<string, unknown>;
  tightenFile(path);
  if (isComplete(o)) return { jwt_secret: o.jwt_secret, refresh_key: o.refresh_key, encryption_key: o.encryption_key };
  for (const k of KEY_NAMES) {
    if (o[k] !== undefined && (typeof o[k] !== "string" || (o[k] as string).length < MIN_KEY_LENGTH)) {
      throw new ConfigError(`the key file ${path}: ${k} must be a string of at least ${MIN_KEY_LENGTH} characters`);
    }
  }
  // Keys the operator left out (an empty `{}` to start over) are generated, and the file replaced whole.
  const filled = { ...generateKeys(), ...(o as Partial<ServerKeys>) };
  const tmp = writeTemp(path, filled);
  renameSync(tmp, path);
  fsyncDir(dirname(path));
  return filled;
}

/**
 * Moves keys an earlier release stored in the database into the key file: the file first (or the
 * one already there), then the rows. Answers the keys now in the file, or null if there were none
 * to move and no file exists. Rows that differ from an existing file are refused (ConfigError).
 */
export function moveStoredKeys(path: string, db: StoredKeys): ServerKeys | null {
  // The rows are read before the file is looked for: whoever deletes them wrote the file first.
  const stored = db.stored(KEY_NAMES);
  const existing = readKeyFile(path);
  if (Object.keys(stored).length === 0) return existing;
  const keys = existing ?? createKeyFile(path, { ...generateKeys(), ...stored });
  if (Object.entries(stored).some(([k, v]) => keys[k as KeyName] !== v)) {
    // Rows that differ from the file (an earlier release's backup put in place by hand): which keys
    // the data needs is the operator's call, never made silently (issue 29). Nothing is changed.
    const dbFile = path.endsWith(".keys") ? path.slice(0, -".keys".length) : path;
    throw new ConfigError(
      `the database ${dbFile} holds server keys in its settings table (a backup of a release before the key file?) that differ from the key file ${path}; ` +
        `they are never used silently, so nothing was changed. To use the backup's keys (sessions made with the file's keys end), restore that backup with suite restore --adopt-keys FILE; ` +
        `to keep the key file, delete the rows: DELETE FROM settings WHERE key IN (${KEY_NAMES.map((k) => `'${k}'`).join(", ")})`,
    );
  }
  db.forget(KEY_NAMES);
  return keys;
}

/**
 * `suite restore --adopt-keys`: the restored backup's own keys (rows an earlier release kept in
 * `settings`) become the key file's, missing ones kept from the current file (or generated). The
 * current file is kept aside as `<keys>.replaced-<time>`; answers that name, or null when there was
 * none. The rows stay in the backup: the next start finds them equal to the file and deletes them.
 */
export function adoptKeys(path: string, stored: Record<string, string>): string | null {
  const existing = readKeyFile(path);
  const keys = { ...(existing ?? generateKeys()), ...stored } as ServerKeys;
  if (!isComplete(keys)) throw new ConfigError(`the backup's keys are not keys of at least ${MIN_KEY_LENGTH} characters; they cannot be adopted`);
  if (!existing) {
    createKeyFile(path, keys);
    return null;
  }
  const tmp = writeTemp(path, keys);
  const aside = `${path}.replaced-${new Date().toISOString().replace(/:/g, "-")}`;
  try {
    linkSync(path, aside);
  } catch {
    copyFileSync(path, aside);
  }
  renameSync(tmp, path);
  fsyncDir(dirname(path));
  return aside;
}

/**
 * The server's keys for the database at `dbFile`: from its key file, created on first start (or
 * filled from the database of an earlier release). A database that holds accounts but whose key
 * file is gone is refused: every session and every 2FA secret depends on those keys, and new ones
 * would silently sign everyone out and lock out every user with 2FA.
 */
export function loadServerKeys(dbFile: string, db: StoredKeys): ServerKeys {
  const path = keyFileOf(dbFile);
  const keys = moveStoredKeys(path, db);
  if (keys) return keys;
  if (db.holdsAccounts()) {
    throw new ConfigError(
      `the key file ${path} is missing, but the database ${dbFile} holds accounts: every session and 2FA secret depends on its keys. ` +
        `Restore it beside the database; to start over with new keys instead (everyone signs in again, and users with 2FA cannot pass it), put {} in that file`,
    );
  }
  return createKeyFile(path, generateKeys());
}

