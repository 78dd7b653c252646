import { createHmac } from "node:crypto";

/**
 * An RFC 6238 implementation of the tests' own, independent of the server's (otpauth): HMAC via
 * node:crypto and the RFC 4226 §5.3 dynamic truncation, written out from the RFCs.
 */
export function hotp(key: Buffer, counter: number, digits = 6, algorithm: "sha1" | "sha256" | "sha512" = "sha1"): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac(algorithm, key).update(msg).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!;
  return String(binary % 10 ** digits).padStart(digits, "0");
}

/** T = floor((unix seconds - T0) / X), T0 = 0, X = 30. */
export const totpAt = (key: Buffer, unixSeconds: number, digits = 6) => hotp(key, Math.floor(unixSeconds / 30), digits);

/** RFC 4648 base32, as authenticator apps read the setup secret. */
export function base32Decode(text: string): Buffer {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of text.replace(/=+$/, "").toUpperCase()) {
    const i = alphabet.indexOf(ch);
    if (i < 0) throw new Error(`not base32: ${ch}`);
    value = (value << 5) | i;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** The code an authenticator app holding `secret` shows at `ms`, `steps` time steps away. */
export const appCode = (secret: string, ms: number, steps = 0) => totpAt(base32Decode(secret), Math.floor(ms / 1000) + steps * 30);
