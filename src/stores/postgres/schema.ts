import type { Pg } from "./database";
import s10 from "./schema/10-tenants-users.sql" with { type: "text" };
import s20 from "./schema/20-security.sql" with { type: "text" };
import s30 from "./schema/30-auth.sql" with { type: "text" };
import s40 from "./schema/40-mail-invitations.sql" with { type: "text" };
import s50 from "./schema/50-crm.sql" with { type: "text" };
import s51 from "./schema/51-deal-search.sql" with { type: "text" };
import s52 from "./schema/52-deal-text-by-filters.sql" with { type: "text" };
import s53 from "./schema/53-tenant-first-keys.sql" with { type: "text" };
import s54 from "./schema/54-user-directory.sql" with { type: "text" };
import s55 from "./schema/55-provider-verified-addresses.sql" with { type: "text" };
import s56 from "./schema/56-sealed-outbox.sql" with { type: "text" };
import s57 from "./schema/57-idempotency-keys.sql" with { type: "text" };
import s58 from "./schema/58-import-jobs.sql" with { type: "text" };
import s59 from "./schema/59-new-device-notices.sql" with { type: "text" };
import s60 from "./schema/60-passkeys.sql" with { type: "text" };
import s61 from "./schema/61-sign-in-policy.sql" with { type: "text" };
import s62 from "./schema/62-events.sql" with { type: "text" };
import s63 from "./schema/63-deal-activities.sql" with { type: "text" };
import s64 from "./schema/64-operators.sql" with { type: "text" };
import s65 from "./schema/65-deal-sums.sql" with { type: "text" };
import s66 from "./schema/66-saved-views.sql" with { type: "text" };
import s67 from "./schema/67-webhooks.sql" with { type: "text" };
import s68 from "./schema/68-bulk-deal-changes.sql" with { type: "text" };
import s69 from "./schema/69-operator-backup-codes.sql" with { type: "text" };
import s70 from "./schema/70-record-activities.sql" with { type: "text" };
import s71 from "./schema/71-deal-search-head.sql" with { type: "text" };
import s72 from "./schema/72-deal-notes-searched.sql" with { type: "text" };
import s73 from "./schema/73-deal-search-pending.sql" with { type: "text" };

/**
 * The PostgreSQL schema, one file per feature group, applied in this order (later files refer to
 * earlier tables). Imported as text so that the compiled binary carries them.
 */
const FILES: Array<{ name: string; sql: string }> = [
  { name: "10-tenants-users.sql", sql: s10 },
  { name: "20-security.sql", sql: s20 },
  { name: "30-auth.sql", sql: s30 },
  { name: "40-mail-invitations.sql", sql: s40 },
  { name: "50-crm.sql", sql: s50 },
  { name: "51-deal-search.sql", sql: s51 },
  { name: "52-deal-text-by-filters.sql", sql: s52 },
  { name: "53-tenant-first-keys.sql", sql: s53 },
  { name: "54-user-directory.sql", sql: s54 },
  { name: "55-provider-verified-addresses.sql", sql: s55 },
  { name: "56-sealed-outbox.sql", sql: s56 },
  { name: "57-idempotency-keys.sql", sql: s57 },
  { name: "58-import-jobs.sql", sql: s58 },
  { name: "59-new-device-notices.sql", sql: s59 },
  { name: "60-passkeys.sql", sql: s60 },
  { name: "61-sign-in-policy.sql", sql: s61 },
  { name: "62-events.sql", sql: s62 },
  { name: "63-deal-activities.sql", sql: s63 },
  { name: "64-operators.sql", sql: s64 },
  { name: "65-deal-sums.sql", sql: s65 },
  { name: "66-saved-views.sql", sql: s66 },
  { name: "67-webhooks.sql", sql: s67 },
  { name: "68-bulk-deal-changes.sql", sql: s68 },
  { name: "69-operator-backup-codes.sql", sql: s69 },
  { name: "70-record-activities.sql", sql: s70 },
  { name: "71-deal-search-head.sql", sql: s71 },
  { name: "72-deal-notes-searched.sql", sql: s72 },
  { name: "73-deal-search-pending.sql", sql: s73 },
];

/**
 * Schema files added after version 1 (the first release's files, 10 to 51): file 52 is version 2,
 * 53 version 3, 54 version 4, 55 version 5, 56 version 6, 57 version 7, 58 version 8, 59 version 9, 60 version 10, 61 version 11, 62 version 12, 63 version 13, 64 version 14, 65 version 15, 66 version 16, 67 version 17, 68 version 18, 69 version 19, 70 version 20, 71 version 21, 72 version 22, 73 version 23. A new database gets every file at once; an older one runs these as migrate.ts's
 * steps. Released files are never edited: a later file changes what an earlier one made.
 */
export const LATER_FILES: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  { version: 2, name: "52-deal-text-by-filters.sql", sql: s52 },
  { version: 3, name: "53-tenant-first-keys.sql", sql: s53 },
  { version: 4, name: "54-user-directory.sql", sql: s54 },
  { version: 5, name: "55-provider-verified-addresses.sql", sql: s55 },
  { version: 6, name: "56-sealed-outbox.sql", sql: s56 },
  { version: 7, name: "57-idempotency-keys.sql", sql: s57 },
  { version: 8, name: "58-import-jobs.sql", sql: s58 },
  { version: 9, name: "59-new-device-notices.sql", sql: s59 },
  { version: 10, name: "60-passkeys.sql", sql: s60 },
  { version: 11, name: "61-sign-in-policy.sql", sql: s61 },
  { version: 12, name: "62-events.sql", sql: s62 },
  { version: 13, name: "63-deal-activities.sql", sql: s63 },
  { version: 14, name: "64-operators.sql", sql: s64 },
  { version: 15, name: "65-deal-sums.sql", sql: s65 },
  { version: 16, name: "66-saved-views.sql", sql: s66 },
  { version: 17, name: "67-webhooks.sql", sql: s67 },
  { version: 18, name: "68-bulk-deal-changes.sql", sql: s68 },
  { version: 19, name: "69-operator-backup-codes.sql", sql: s69 },
  { version: 20, name: "70-record-activities.sql", sql: s70 },
  { version: 21, name: "71-deal-search-head.sql", sql: s71 },
  { version: 22, name: "72-deal-notes-searched.sql", sql: s72 },
  { version: 23, name: "73-deal-search-pending.sql", sql: s73 },
];

/** Creates every table and index in an empty database (or schema), in one transaction. */
export async function applySchema(pg: Pg): Promise<void> {
  await pg.begin(async (tx) => {
    for (const f of FILES) await tx.unsafe(f.sql);
  });
}

export const schemaFiles = (): ReadonlyArray<{ name: string; sql: string }> => FILES;
