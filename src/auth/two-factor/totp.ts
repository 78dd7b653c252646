import { timingSafeEqual } from "node:crypto";
import { HOTP, Secret, TOTP } from "otpauth";

/** The authenticator-app defaults (docs/interface.md#two-factor-authentication): every app reads these without asking. */
export const TOTP_PARAMS = { algorithm: "SHA1", digits: 6, period: 30 } as const;
const PERIOD_MS = TOTP_PARAMS.period * 1000;
/** Steps accepted either side of now: one, for clocks a little apart. */
const WINDOW = 1;
/** 160 bits, the HMAC-SHA1 block RFC 4226 recommends. */
const SECRET_BYTES = 20;

export const TOTP_ISSUER = "Workspace Suite";

/** A new random secret, base32 as apps expect it. */
export const newTotpSecret = (): string => new Secret({ size: SECRET_BYTES }).base32;

/**
 * The otpauth:// URI an authenticator app reads from a QR code: `otpauth://totp/<issuer>:<email>?...`.
 * The label keeps its "@" as typed, as in the Key URI Format's own example ("@" is legal in a path).
 */
export function otpauthUrl(secretBase32: string, email: string, issuer = TOTP_ISSUER): string {
  const url = new TOTP({ ...TOTP_PARAMS, issuer, label: email, secret: Secret.fromBase32(secretBase32) }).toString();
  const query = url.indexOf("?");
  return url.slice(0, query).replace(/%40/g, "@") + url.slice(query);
}

export const stepAt = (ms: number): number => Math.floor(ms / PERIOD_MS);

/** The code of one time step. */
export const codeAt = (secretBase32: string, step: number): string =>
  HOTP.generate({ secret: Secret.fromBase32(secretBase32), algorithm: TOTP_PARAMS.algorithm, digits: TOTP_PARAMS.digits, counter: step });

const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * The time step `code` belongs to, within the window around `nowMs` and after `lastStep` (RFC 6238
 * §5.2: a step once accepted never is again); null when there is none. Every candidate is
 * compared, in constant time, so the answer's timing does not say which step matched.
 */
export function matchStep(secretBase32: string, code: string, nowMs: number, lastStep: number | null): number | null {
  const now = stepAt(nowMs);
  let found: number | null = null;
  for (let step = now - WINDOW; step <= now + WINDOW; step++) {
    const hit = same(codeAt(secretBase32, step), code);
    if (hit && (lastStep === null || step > lastStep) && found === null) found = step;
  }
  return found;
}
