import { readFileSync } from "node:fs";
import { createOutboxSeal } from "../../src/mail/outbox-seal";

/**
 * The outbox keeps pending mail's bodies and link sealed (src/mail/outbox-seal.ts). Tests that read
 * rows with SQL open them as the sender does: with the app's encryption key, or the key file
 * beside a database file a spawned server uses.
 */
type Sealed = { id: string; link?: string | null; text_body?: string | null; html_body?: string | null };

export function openMail<T extends Sealed>(encryptionKey: string, row: T): T {
  const opened = createOutboxSeal(encryptionKey).open({ text_body: null, html_body: null, link: null, ...row });
  return { ...row, ...("link" in row ? { link: opened.link } : {}), ...("text_body" in row ? { text_body: opened.text_body } : {}), ...("html_body" in row ? { html_body: opened.html_body } : {}) };
}

/** The encryption key of the key file beside `dbFile` (`<db>.keys`). */
export const keyOfFile = (dbFile: string): string => (JSON.parse(readFileSync(`${dbFile}.keys`, "utf8")) as { encryption_key: string }).encryption_key;

/** A row read from the database file `dbFile`, opened with its key file. */
export const openMailOfFile = <T extends Sealed>(dbFile: string, row: T): T => openMail(keyOfFile(dbFile), row);
