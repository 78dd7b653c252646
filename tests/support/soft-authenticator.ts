/**
 * A software WebAuthn authenticator for server tests: ES256 keys from node:crypto, the
 * authenticator data, clientDataJSON and a `none` attestation built by hand (a few lines of CBOR),
 * answering the JSON forms a browser's PublicKeyCredential.toJSON() gives. Each option lets a
 * test break one thing (origin, RP ID, user verification, counter) and nothing else.
 */
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";

const b64 = (b: Uint8Array | string) => Buffer.from(b).toString("base64url");
const sha256 = (b: Uint8Array | string) => createHash("sha256").update(b).digest();

/** Minimal CBOR (RFC 8949): unsigned and negative integers, byte and text strings, maps. */
function cbor(v: unknown): Buffer {
  const head = (major: number, n: number) => {
    if (n < 24) return Buffer.from([(major << 5) | n]);
    if (n < 256) return Buffer.from([(major << 5) | 24, n]);
    if (n < 65536) return Buffer.from([(major << 5) | 25, n >> 8, n & 255]);
    const b = Buffer.alloc(5);
    b[0] = (major << 5) | 26;
    b.writeUInt32BE(n, 1);
    return b;
  };
  if (typeof v === "number") return v >= 0 ? head(0, v) : head(1, -1 - v);
  if (typeof v === "string") return Buffer.concat([head(3, Buffer.byteLength(v)), Buffer.from(v)]);
  if (v instanceof Uint8Array) return Buffer.concat([head(2, v.length), v]);
  if (v instanceof Map) return Buffer.concat([head(5, v.size), ...[...v].flatMap(([k, x]) => [cbor(k), cbor(x)])]);
  throw new Error(`cbor: cannot encode ${typeof v}`);
}

export interface SoftCredential {
  id: Buffer;
  rpId: string;
  userHandle: string;
  privateKey: KeyObject;
  counter: number;
}

/** What a test may change in one ceremony. */
export interface Twist {
  /** The page's origin the browser would report (clientDataJSON.origin). */
  origin?: string;
  /** Sign for this RP ID instead of the options' one. */
  rpId?: string;
  /** User verification done (the UV flag); default true. */
  uv?: boolean;
  /** Sign another challenge than the options'. */
  challenge?: string;
  /** The counter to sign with, instead of the next one. */
  counter?: number;
  /** Leave the user handle out (as some authenticators do on a non-discoverable credential). */
  noUserHandle?: boolean;
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];

  constructor(private readonly origin: string) {}

  private authData(rpId: string, uv: boolean, counter: number, attested?: Buffer): Buffer {
    const flags = FLAG_UP | (uv ? FLAG_UV : 0) | (attested ? FLAG_AT : 0);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), c, attested ?? Buffer.alloc(0)]);
  }

  /** navigator.credentials.create: a new discoverable ES256 credential, attestation `none`. */
  create(options: { challenge: string; rp: { id?: string }; user: { id: string } }, t: Twist = {}) {
    const rpId = t.rpId ?? options.rp.id!;
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const jwk = publicKey.export({ format: "jwk" });
    const cose = cbor(new Map<number, unknown>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, "base64url")], [-3, Buffer.from(jwk.y!, "base64url")]]));
    const id = randomBytes(16);
    const len = Buffer.from([id.length >> 8, id.length & 255]);
    const attested = Buffer.concat([Buffer.alloc(16), len, id, cose]);
    const authData = this.authData(rpId, t.uv ?? true, 0, attested);
    const clientData = JSON.stringify({ type: "webauthn.create", challenge: t.challenge ?? options.challenge, origin: t.origin ?? this.origin, crossOrigin: false });
    const attestationObject = cbor(new Map<string, unknown>([["fmt", "none"], ["attStmt", new Map()], ["authData", authData]]));
    this.credentials.push({ id, rpId, userHandle: options.user.id, privateKey, counter: 0 });
    return {
      id: b64(id),
      rawId: b64(id),
      type: "public-key" as const,
      response: { clientDataJSON: b64(clientData), attestationObject: b64(attestationObject), transports: ["internal"] },
      authenticatorAttachment: "platform" as const,
      clientExtensionResults: {},
    };
  }

  /** navigator.credentials.get: an assertion by `cred` (default the newest credential for the RP). */
  get(options: { challenge: string; rpId?: string }, t: Twist & { cred?: SoftCredential } = {}) {
    const cred = t.cred ?? [...this.credentials].reverse().find((c) => c.rpId === options.rpId) ?? this.credentials.at(-1)!;
    const rpId = t.rpId ?? options.rpId ?? cred.rpId;
    const counter = t.counter ?? cred.counter + 1;
    cred.counter = Math.max(cred.counter, counter);
    const authData = this.authData(rpId, t.uv ?? true, counter);
    const clientData = JSON.stringify({ type: "webauthn.get", challenge: t.challenge ?? options.challenge, origin: t.origin ?? this.origin, crossOrigin: false });
    const signature = sign("sha256", Buffer.concat([authData, sha256(clientData)]), cred.privateKey);
    return {
      id: b64(cred.id),
      rawId: b64(cred.id),
      type: "public-key" as const,
      response: {
        clientDataJSON: b64(clientData),
        authenticatorData: b64(authData),
        signature: b64(signature),
        ...(t.noUserHandle ? {} : { userHandle: cred.userHandle }),
      },
      authenticatorAttachment: "platform" as const,
      clientExtensionResults: {},
    };
  }
}
