import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { AppError, ERROR_CODE, errors } from "../../src/kernel/errors";
import { SRC, conflicts, constructions, files } from "./error-catalogue";

/**
 * The whole catalogue of error codes (issue 13, 3b): every code is an identifier that starts with
 * a letter, so that clients can map codes to enum members. Found twice: by reading the source
 * for every `new AppError(` and `errors.conflict(` (so a code nobody calls in a test is still
 * seen), and by importing the factory objects and calling every factory.
 */

/** Exported objects named like `errors` / `twoFactorErrors`, from every file that builds an AppError. */
async function factoryObjects(): Promise<Array<[string, Record<string, (...args: unknown[]) => unknown>]>> {
  const found: Array<[string, Record<string, (...args: unknown[]) => unknown>]> = [];
  for (const { path, text } of files) {
    if (!text.includes("new AppError(")) continue;
    const mod = (await import(join(SRC, path))) as Record<string, unknown>;
    for (const [name, value] of Object.entries(mod)) {
      if (!/(^e|E)rrors$/.test(name) || typeof value !== "object" || value === null) continue;
      found.push([`${path}:${name}`, value as Record<string, (...args: unknown[]) => unknown>]);
    }
  }
  return found;
}

describe("the AppError constructor", () => {
  test.each(["2fa_already_enabled", "2fa_not_pending", "", "_x", "1x", "Rate_limited", "rate-limited", "rate limited", " x", "x\n", "código"])(
    "refuses the code %p: a programming error, thrown where it is made",
    (code) => {
      expect(() => new AppError(409, code, "Detail.")).toThrow(TypeError);
    },
  );

  test.each(["a", "x1", "two_factor_already_enabled", "rate_limited", "invalid_2fa_code"])("accepts %p", (code) => {
    expect(new AppError(409, code, "Detail.").code).toBe(code);
  });

  test("the rule is the one the issue names", () => {
    expect(ERROR_CODE.source).toBe("^[a-z][a-z0-9_]*$");
  });
});

describe("every code in the source", () => {
  const built = constructions();
  const conflictSites = conflicts();

  test("every AppError is built with a literal code, except the one pass-through factory (errors.conflict)", () => {
    const dynamic = built.filter((s) => s.code === null).map((s) => `${s.file}:${s.line}`);
    expect(dynamic).toHaveLength(1);
    expect(dynamic[0]).toStartWith("kernel/errors.ts:");
    const errorsSource = files.find((f) => f.path === "kernel/errors.ts")!.text;
    expect(errorsSource).toMatch(/conflict: \(code: string, detail: string\) => new AppError\(409, code, detail\)/);
    // Its callers, in turn, give literals.
    expect(conflictSites.length).toBeGreaterThanOrEqual(4);
    expect(conflictSites.filter((s) => s.code === null).map((s) => `${s.file}:${s.line}`)).toEqual([]);
  });

  test("the scan finds the catalogue (it is not reading nothing)", () => {
    expect(files.length).toBeGreaterThan(40);
    const codes = new Set([...built, ...conflictSites].map((s) => s.code));
    for (const known of ["not_authenticated", "rate_limited", "csrf_failed", "subdomain_taken", "unavailable", "two_factor_already_enabled"]) expect(codes).toContain(known);
    expect(codes.size).toBeGreaterThanOrEqual(25);
  });

  test("every literal code matches ^[a-z][a-z0-9_]*$, and the constructor takes it", () => {
    const bad = [...built, ...conflictSites].filter((s) => s.code !== null && !ERROR_CODE.test(s.code)).map((s) => `${s.file}:${s.line} ${s.code}`);
    expect(bad).toEqual([]);
    for (const s of [...built, ...conflictSites]) if (s.code !== null) expect(new AppError(s.status!, s.code, "Detail.").code).toBe(s.code);
  });
});

describe("every factory, called", () => {
  test("each errors.* and feature *Errors factory builds an AppError whose code matches", async () => {
    const objects = await factoryObjects();
    expect(objects.map(([name]) => name).sort()).toEqual(expect.arrayContaining(["kernel/errors.ts:errors", "auth/two-factor/model.ts:twoFactorErrors"]));
    const made: string[] = [];
    for (const [owner, factories] of objects) {
      for (const [name, factory] of Object.entries(factories)) {
        // Placeholder arguments: a detail, a module name, a code, a number of seconds.
        const e = factory(...Array.from({ length: factory.length }, () => "placeholder"));
        expect({ factory: `${owner}.${name}`, isAppError: e instanceof AppError }).toEqual({ factory: `${owner}.${name}`, isAppError: true });
        const { code, status } = e as AppError;
        expect({ factory: `${owner}.${name}`, code, matches: ERROR_CODE.test(code) }).toEqual({ factory: `${owner}.${name}`, code, matches: true });
        expect(status).toBeGreaterThanOrEqual(400);
        made.push(code);
      }
    }
    expect(made.length).toBe(Object.keys(errors).length + objects.filter(([n]) => !n.endsWith(":errors")).reduce((n, [, o]) => n + Object.keys(o).length, 0));
    // Every literal code written inside those factory files is produced by calling the factories.
    const literalInFactories = constructions().filter((s) => s.code !== null && (s.file === "kernel/errors.ts" || s.file === "auth/two-factor/model.ts"));
    for (const s of literalInFactories) expect(made).toContain(s.code!);
  });

  test("errors.conflict with every code its callers give", () => {
    for (const s of conflicts()) expect(errors.conflict(s.code!, "Detail.")).toMatchObject({ status: 409, code: s.code });
  });
});
