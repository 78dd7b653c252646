import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";

const VERSION = "v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM under a subkey of the server key for one `purpose` (HKDF): TOTP secrets and identity
 * providers' client secrets are sealed under different keys. `context` (the owner's id) is bound
 * as associated data: a sealed secret copied onto another row does not open there.
 */
export function createSealer(masterKey: string, purpose: string) {
  const sealKey = Buffer.from(hkdfSync("sha256", masterKey, "workspace-suite", purpose, 32));
  return {
    seal(plain: string, context: string): string {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", sealKey, iv).setAAD(Buffer.from(context, "utf8"));
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
      return `${VERSION}.${iv.toString("base64url")}.${body.toString("base64url")}`;
    },

    /** Throws when the text was not sealed under this key for this context. */
    open(sealed: string, context: string): string {
      const [version, ivText, bodyText] = sealed.split(".");
      if (version !== VERSION || !ivText || !bodyText) throw new Error("sealed secret: unknown format");
      const body = Buffer.from(bodyText, "base64url");
      const decipher = createDecipheriv("aes-256-gcm", sealKey, Buffer.from(ivText, "base64url")).setAAD(Buffer.from(context, "utf8"));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString("utf8");
    },
  };
}

export type Sealer = ReturnType<typeof createSealer>;

/**
 * Encryption and keyed hashing under one server key. Each use gets its own subkey (HKDF), so the
 * key that encrypts TOTP secrets never also keys the backup-code hashes.
 */
export function createSecretBox(masterKey: string) {
  const subkey = (purpose: string) => Buffer.from(hkdfSync("sha256", masterKey, "workspace-suite", purpose, 32));
  const macKey = subkey("backup-code/v1");
  const sealer = createSealer(masterKey, "totp-secret/v1");

  return {
    /** AES-256-GCM, bound to `context` (see createSealer). */
    seal: sealer.seal,
    /** Throws when the text was not sealed under this key for this context. */
    open: sealer.open,

    /** HMAC-SHA256, hex: a hash nobody without the server key can test guesses against. */
    mac(text: string): string {
      return createHmac("sha256", macKey).update(text, "utf8").digest("hex");
    },
  };
}

export type SecretBox = ReturnType<typeof createSecretBox>;
