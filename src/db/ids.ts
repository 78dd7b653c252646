import { nanoid } from "nanoid";

/** A new row id: 21 URL-safe characters, 126 random bits. */
export const newId = (): string => nanoid();

/** A secret token for a link or a session: 43 URL-safe characters, 256 random bits. */
export const newSecretToken = (): string => nanoid(43);

/** Milliseconds since the epoch, as stored; API answers use ISO 8601 with a Z. */
export const toIso = (ms: number): string => new Date(ms).toISOString();
export const toIsoOrNull = (ms: number | null): string | null => (ms === null ? null : toIso(ms));
