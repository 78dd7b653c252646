import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { COMMON_PASSWORDS_FILE, COMMON_PASSWORDS_MAX_BYTES, commonPasswordLines } from "../../scripts/common-passwords";
import { commonPasswordCount, commonPasswordProblem, isCommonPassword } from "../../src/security/common-passwords";

/** The bundled list of common passwords (issue 33.3): its file, its lookup, and the names rule. */

describe("the committed list", () => {
  test("is what `bun run passwords:build` makes from the installed sources, ≥ 100,000 entries in ≤ 1 MB", async () => {
    const gz = readFileSync(COMMON_PASSWORDS_FILE);
    expect(gz.length).toBeLessThanOrEqual(COMMON_PASSWORDS_MAX_BYTES);
    const committed = gunzipSync(gz).toString("utf8");
    const built = commonPasswordLines();
    expect(built.length).toBeGreaterThanOrEqual(100_000);
    // Compared as text, not gzip bytes: another zlib may compress the same lines differently.
    expect(committed === built.join("\n")).toBe(true);
    expect(await commonPasswordCount()).toBe(built.length);
  }, 60_000);
});

describe("isCommonPassword", () => {
  test("finds entries whatever their case, at both ends of the sorted list, and nothing else", async () => {
    const lines = gunzipSync(readFileSync(COMMON_PASSWORDS_FILE)).toString("utf8").split("\n");
    for (const word of [lines[0]!, lines[1]!, lines[Math.floor(lines.length / 2)]!, lines.at(-2)!, lines.at(-1)!]) {
      expect(await isCommonPassword(word)).toBe(true);
      expect(await isCommonPassword(word.toUpperCase())).toBe(true);
      // One character more or less is another password.
      expect(await isCommonPassword(`${word}\u0001`)).toBe(false);
      expect(await isCommonPassword(word.slice(0, -1) + "\u0001")).toBe(false);
    }
    for (const common of ["password", "PassWord1", "iloveyou", "qwertyuiop", "1234567890", "Password123"]) expect(await isCommonPassword(common)).toBe(true);
    for (const rare of ["correct horse battery", "a brand new passphrase", "zq-7 otter lamp mile", ""]) expect(await isCommonPassword(rare)).toBe(false);
  });

  test("an entry that is not ASCII is found by its UTF-8 bytes", async () => {
    const lines = gunzipSync(readFileSync(COMMON_PASSWORDS_FILE)).toString("utf8").split("\n");
    const wide = lines.filter((l) => /[^\x00-\x7f]/.test(l));
    expect(wide.length).toBeGreaterThan(0);
    for (const w of wide) expect(await isCommonPassword(w)).toBe(true);
  });
});

describe("commonPasswordProblem", () => {
  const owner = { email: "maria.lopez@example.com", organizationName: "Blue Harbor Logistics", subdomain: "blueharbor" };

  test("refuses a listed password, the address's name and the organization's, each with its own sentence", async () => {
    expect(await commonPasswordProblem("Sunshine123", owner)).toContain("list of common or leaked passwords");
    for (const p of ["Maria.Lopez-2026!", "mylittle marialopez key"]) expect(await commonPasswordProblem(p, owner)).toContain("your email address's name");
    for (const p of ["blue harbor logistics rocks", "BlueHarborLogistics#1", "ship at blueharbor 9"]) expect(await commonPasswordProblem(p, owner)).toContain("organization's name");
  });

  test("accepts anything else: no composition rules; a name shorter than 4 characters is not looked for", async () => {
    for (const p of ["lowercase only words here", "zq-7 otter lamp mile", "ab some long phrase"]) expect(await commonPasswordProblem(p, owner)).toBeNull();
    expect(await commonPasswordProblem("ab some long phrase", { email: "ab@x.test", organizationName: "Abc", subdomain: "abc" })).toBeNull();
  });
});
