import { nanoid } from "nanoid";

/**
 * A new row id: 21 URL-safe characters, about 126 random bits. Never starting with "-": a CSV
 * export's formula guard would prefix such a cell with an apostrophe, and the id in the file would
 * no longer be the row's (1 id in 64 is drawn again).
 */
export function newId(): string {
  for (;;) {
    const id = nanoid();
    if (id[0] !== "-") return id;
  }
}

/** A secret token for a link or a session: 43 URL-safe characters, 256 random bits. */
export const newSecretToken = (): string => nanoid(43);

/**
 * What is stored of a mailed token (magic link, invitation): its SHA-256, in hex. A token of 256
 * random bits needs no salt or slow hash; a database copy then opens no link.
 */
export const hashToken = (token: string): string => new Bun.CryptoHasher("sha256").update(token).digest("hex");

/** Milliseconds since the epoch, as stored; API answers use ISO 8601 with a Z. */
export const toIso = (ms: number): string => new Date(ms).toISOString();
export const toIsoOrNull = (ms: number | null): string | null => (ms === null ? null : toIso(ms));
