import { randomBytes } from "node:crypto";

export const BACKUP_CODE_COUNT = 10;
/** Crockford's base32: no i, l, o or u, so a code read aloud or copied by hand stays one code. */
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
const LENGTH = 8;

/** Ten fresh codes, `xxxx-xxxx`, 40 random bits each. */
export function newBackupCodes(count = BACKUP_CODE_COUNT): string[] {
  const codes = new Set<string>();
  while (codes.size < count) {
    // 256 is a multiple of 32: masking a byte keeps every character equally likely.
    const chars = Array.from(randomBytes(LENGTH), (b) => ALPHABET[b & 31]).join("");
    codes.add(`${chars.slice(0, 4)}-${chars.slice(4)}`);
  }
  return [...codes];
}

/**
 * A code as typed: with or without the dash, any case, the letters Crockford reads as digits
 * (o → 0, i and l → 1) forgiven. Null when it cannot be a backup code.
 */
export function normalizeBackupCode(typed: string): string | null {
  const s = typed.replace(/[\s-]/g, "").toLowerCase().replace(/o/g, "0").replace(/[il]/g, "1");
  return s.length === LENGTH && [...s].every((c) => ALPHABET.includes(c)) ? s : null;
}

/** What is stored: the keyed hash of the code bound to its owner, never the code. */
export const backupCodeHash = (mac: (text: string) => string, userId: string, normalized: string): string => mac(`${userId}:${normalized}`);
