import { accessSync, constants, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ConfigError } from "../config";

/** The OS's reason, in words, for a failed file operation (`e.code`), else its own message. */
export function osReason(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const words: Record<string, string> = {
    ENOENT: "does not exist",
    EACCES: "permission denied",
    EPERM: "permission denied",
    ENOTDIR: "not a directory",
    EISDIR: "is a directory",
    EROFS: "read-only file system",
    ENOSPC: "no space left on device",
    ELOOP: "too many symbolic links",
    ENAMETOOLONG: "name too long",
  };
  return (code && words[code]) || (e instanceof Error ? e.message : String(e));
}

const statOrNull = (path: string) => {
  try {
    return statSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
};

/**
 * Checks, before SQLite tries (whose only word is "unable to open database file"), that the
 * database file can be opened for writing or created, with its -wal and -shm beside it. A
 * missing folder is fine when it can be made: the server makes it (0700). Throws ConfigError
 * `cannot open database PATH: why`.
 */
export function checkDatabasePath(path: string): void {
  if (path === ":memory:") return;
  const file = resolve(path);
  const fail = (why: string) => new ConfigError(`cannot open database ${path}: ${why}`);
  const writable = (p: string) => {
    try {
      accessSync(p, constants.W_OK | constants.X_OK);
      return null;
    } catch (e) {
      return osReason(e);
    }
  };
  let st: ReturnType<typeof statOrNull>;
  try {
    st = statOrNull(file);
  } catch (e) {
    // ENOTDIR: some folder on the way is a file; EACCES: one cannot be searched.
    let up = dirname(file);
    while (up !== dirname(up) && !statSafe(up)?.isDirectory()) up = dirname(up);
    const blocker = firstNonDirectory(file);
    throw fail(blocker ? `${blocker} is not a directory` : `${osReason(e)} (under ${up})`);
  }
  if (st) {
    if (st.isDirectory()) throw fail("it is a directory; --db names a file, e.g. ./data/suite.db");
    try {
      accessSync(file, constants.R_OK | constants.W_OK);
    } catch (e) {
      throw fail(osReason(e));
    }
    const why = writable(dirname(file));
    if (why) throw fail(`directory ${dirname(file)}: ${why} (SQLite writes its -wal and -shm files beside the database)`);
    return;
  }
  // A new file: its folder must exist and be writable, or the nearest existing one must let us make it.
  let existing = dirname(file);
  while (!statSafe(existing)) existing = dirname(existing);
  if (!statSafe(existing)!.isDirectory()) throw fail(`${existing} is not a directory`);
  const why = writable(existing);
  if (why) {
    throw fail(existing === dirname(file) ? `directory ${existing}: ${why}` : `directory ${dirname(file)} does not exist and cannot be made in ${existing}: ${why}`);
  }
}

function statSafe(path: string) {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

/** The first component of `file`'s folders that exists but is not a folder. */
function firstNonDirectory(file: string): string | null {
  const parts: string[] = [];
  for (let d = dirname(file); d !== dirname(d); d = dirname(d)) parts.unshift(d);
  for (const d of parts) {
    const s = statSafe(d);
    if (s === null) return null;
    if (!s.isDirectory()) return d;
  }
  return null;
}

/** A failed file operation as one line: the path, and why in words, naming the folder at fault. */
export function describeFileError(e: NodeJS.ErrnoException & { path: string }): string {
  const file = resolve(e.path);
  const verb = e.syscall === "mkdir" ? "cannot create directory" : "cannot open";
  if (e.code === "ENOTDIR") {
    const blocker = firstNonDirectory(file);
    if (blocker) return `${verb} ${e.path}: ${blocker} is not a directory`;
  }
  if (e.code === "ENOENT" && !statSafe(dirname(file))) return `${verb} ${e.path}: directory ${dirname(file)} does not exist`;
  return `${verb} ${e.path}: ${osReason(e)}`;
}
