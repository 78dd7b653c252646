import { createSealer } from "../security/secret-box";
import type { OutboxRow, OutgoingMail } from "./repo";

/**
 * A pending mail's link is a live credential (an Administrator invitation, a sign-in link, a
 * password reset), and its bodies carry it too. The outbox keeps all three sealed (AES-256-GCM
 * under a subkey of the key file's encryption key, bound to the row's id), so a copy of the
 * database (a backup, a `.v<N>.bak`, a `before-restore` file, a stolen disk image of the data)
 * holds no usable link. The store seals on enqueue and opens on every read; only a process with
 * the key file (the sender, `suite mail list`) sees the link.
 */
const PURPOSE = "mail-outbox/v1";
const SEALED = /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Whether a stored value is sealed (a clear body has spaces or line breaks; a clear link, a colon). */
export const isSealed = (v: string | null): boolean => v === null || SEALED.test(v);

export function createOutboxSeal(encryptionKey: string) {
  const sealer = createSealer(encryptionKey, PURPOSE);
  const seal = (v: string | null, id: string) => (v === null || isSealed(v) ? v : sealer.seal(v, id));
  return {
    /** The three secret-bearing fields of a new row `id`, sealed. */
    seal(id: string, m: Pick<OutgoingMail, "text" | "html" | "link">): { text: string; html: string; link: string | null } {
      return { text: sealer.seal(m.text, id), html: sealer.seal(m.html, id), link: m.link === null ? null : sealer.seal(m.link, id) };
    },
    /** A stored field sealed, unless it is already (an earlier release's clear row being sealed). */
    sealStored: seal,
    /**
     * The row with its fields opened. A field sealed under other keys (a key file replaced since)
     * opens as null: the sender then gives the mail up, saying why, instead of sending ciphertext.
     */
    open<T extends Pick<OutboxRow, "id" | "text_body" | "html_body" | "link">>(row: T): T {
      const open = (v: string | null) => {
        if (v === null || !isSealed(v)) return v;
        try {
          return sealer.open(v, row.id);
        } catch {
          return null;
        }
      };
      return { ...row, text_body: open(row.text_body), html_body: open(row.html_body), link: open(row.link) };
    },
  };
}

export type OutboxSeal = ReturnType<typeof createOutboxSeal>;
