import { remembered } from "./remembered";
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

/** Digits in ASCII order, so that ids made by orderedId sort (by code unit, as SQLite and "C" compare) as their numbers. */
const ORDERED_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** Characters of orderedId's number: 62^6, 56.8 billion. */
const ORDERED_WIDTH = 6;

/**
 * A row id like newId's (21 URL-safe characters) whose first six carry `n` (0 ≤ n < 62^6) and
 * whose other 15 are random (about 89 bits): ids made for n = 0, 1, 2, ... sort in that order.
 * For the demo seed's deals, inserted a million at a time: their ids go into the unique index
 * on id in order, at its end, instead of at random pages (1M deals: 18 → 15.5 s of inserts).
 */
export function orderedId(n: number): string {
  let head = "";
  for (let i = 0, x = n; i < ORDERED_WIDTH; i++, x = Math.floor(x / 62)) head = ORDERED_DIGITS[x % 62] + head;
  return head + nanoid(21 - ORDERED_WIDTH);
}

/**
 * A new record id whose first six characters are the second it was made in (orderedId of the
 * seconds since 1970; 62^6 seconds last until the year 3770): records made one after the other
 * land at one end of every index keyed by their id (the id's own, and a timeline's keyed by
 * record), where a random id took a random page of each from a table of millions.
 */
export const timeOrderedId = (now = Date.now()): string => orderedId(Math.floor(now / 1000));

/** A secret token for a link or a session: 43 URL-safe characters, 256 random bits. */
export const newSecretToken = (): string => nanoid(43);

/**
 * A token that names its organization: `<tenant id>.<secret>` (mailed links, OAuth states). Tenant
 * ids are URL-safe and never hold a dot, so the first dot ends the tenant part; the row is looked
 * up by (tenant_id, hash of the whole token), one index probe on the tenant's own shard.
 */
export const newTenantToken = (tenantId: string): string => `${tenantId}.${newSecretToken()}`;

const TENANT_PART = /^[A-Za-z0-9_-]{1,64}$/;
const SECRET = /^[A-Za-z0-9_-]{43}$/;

/**
 * Where a presented token says its row lives: `{ tenantId }` for `<tenant id>.<secret>`;
 * `{ tenantId: null }` for a token made before tokens named their tenant (a bare secret, looked up
 * in every organization until the last of them expires); null for anything else, refused like an
 * unknown token without a query.
 */
export function tokenTenant(token: string): { tenantId: string | null } | null {
  const dot = token.indexOf(".");
  if (dot < 0) return SECRET.test(token) ? { tenantId: null } : null;
  const tenantId = token.slice(0, dot);
  return TENANT_PART.test(tenantId) && SECRET.test(token.slice(dot + 1)) ? { tenantId } : null;
}

/**
 * What is stored of a mailed token (magic link, invitation): its SHA-256, in hex. A token of 256
 * random bits needs no salt or slow hash; a database copy then opens no link.
 */
export const hashToken = (token: string): string => new Bun.CryptoHasher("sha256").update(token).digest("hex");

const DAY_MS = 86_400_000;
/** "YYYY-MM-DDT" of days already formatted (a page's dates fall on a few days). */
const dayPrefix = remembered(4096, (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 11));
let lastDay = Number.NaN;
let lastPrefix = "";
const PAD2 = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, "0"));
const PAD3 = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, "0"));

/**
 * Milliseconds since the epoch, as stored; API answers use ISO 8601 with a Z, exactly as
 * Date#toISOString writes it. The date part of each day is made once and the time read from
 * tables (a deal list writes 40 dates a page: about 12 % fewer instructions each, callgrind);
 * other values (fractions, years outside 0000-9999) go through Date.
 */
const formatIso = (ms: number): string => {
  if (!Number.isInteger(ms) || ms < -62_167_219_200_000 || ms >= 253_402_300_800_000) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  if (day !== lastDay) {
    lastPrefix = dayPrefix(day);
    lastDay = day;
  }
  let t = ms - day * DAY_MS;
  const milli = t % 1000;
  t = (t - milli) / 1000;
  const sec = t % 60;
  t = (t - sec) / 60;
  const min = t % 60;
  return lastPrefix + PAD2[(t - min) / 60]! + ":" + PAD2[min]! + ":" + PAD2[sec]! + "." + PAD3[milli]! + "Z";
};
/**
 * Instants already written, with their text: a deal list shows the same deals page after page
 * (and to each member of an organization), and writing the 40 dates of a page, then flattening
 * them for JSON, cost about 4.5 µs of its 13 (issue 15).
 */
export const toIso: (ms: number) => string = remembered(16_384, formatIso);
export const toIsoOrNull = (ms: number | null): string | null => (ms === null ? null : toIso(ms));
