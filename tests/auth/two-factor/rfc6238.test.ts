import { describe, expect, test } from "bun:test";
import { codeAt, newTotpSecret } from "../../../src/auth/two-factor/totp";
import { appCode, base32Decode, totpAt } from "./rfc6238";

describe("the tests' own RFC 6238 implementation", () => {
  // RFC 6238 Appendix B, SHA1 column: 8-digit codes for the ASCII key "12345678901234567890".
  const key = Buffer.from("12345678901234567890", "ascii");
  const vectors: Array<[number, string]> = [
    [59, "94287082"],
    [1111111109, "07081804"],
    [1111111111, "14050471"],
    [1234567890, "89005924"],
    [2000000000, "69279037"],
    [20000000000, "65353130"],
  ];
  for (const [time, code] of vectors) {
    test(`T = ${time} → ${code}`, () => expect(totpAt(key, time, 8)).toBe(code));
  }

  test("reads base32 as RFC 4648 does", () => {
    // "12345678901234567890" in base32 (RFC 6238's key as an app would be given it).
    expect(base32Decode("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ").toString("ascii")).toBe("12345678901234567890");
  });

  test("agrees with the server's codes for a fresh secret", () => {
    const secret = newTotpSecret();
    expect(base32Decode(secret)).toHaveLength(20);
    const t0 = Date.UTC(2030, 0, 1);
    for (let step = -2; step <= 2; step++) expect(appCode(secret, t0, step)).toBe(codeAt(secret, Math.floor(t0 / 30_000) + step));
  });
});
