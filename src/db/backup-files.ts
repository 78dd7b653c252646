import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, linkSync, openSync, renameSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * The file steps every backup and restore shares: a private temp name beside the target, fsync of
 * a file and of its folder, and putting a finished file in place. A file is only ever seen under
 * its final name complete and on disk: written under a temp name, fsynced, then moved there.
 */

/** `.<name>.<pid>.<random>.tmp` beside `target`: hidden, unique, and recognisably ours to clean up. */
export const tempBeside = (target: string): string =>
  join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);

/** Whether `name` is a temp file `tempBeside` made for a file called `target` (any process). */
export const isTempOf = (name: string, target: string): boolean => name.startsWith(`.${target}.`) && /\.tmp(-wal|-shm|-journal)?$/.test(name);

export function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Makes a rename or link in `dir` durable; not every filesystem lets a folder be fsynced. */
export function fsyncDir(dir: string): void {
  try {
    fsyncPath(dir);
  } catch {
    // The files themselves are synced; nothing more to do here.
  }
}

/**
 * Moves the finished `tmp` to `target` without replacing anything there: a hard link fails if the
 * name exists (two backups racing for one name cannot overwrite each other). Filesystems without
 * hard links get a rename after a last look. The caller removes `tmp` afterwards either way.
 */
export function publishNew(tmp: string, target: string): void {
  try {
    linkSync(tmp, target);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw e;
    renameSync(tmp, target);
  }
  fsyncDir(dirname(target));
}
