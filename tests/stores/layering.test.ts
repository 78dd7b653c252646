import { describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

// The layering issue 19 asks for, checked on every import in src/: nothing above the stores knows
// which backend runs, services and routes never see the raw database, and the shared folders
// import no feature.

const ROOT = resolve(import.meta.dir, "../..");
const SRC = join(ROOT, "src");
const FEATURES = ["auth", "organization", "team", "crm", "mail", "security-log", "web", "idempotency"];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts") ? [p] : [];
  });
}

/** Every relative module a file imports or re-exports (static or dynamic), as a path under the repo. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specs = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']+)["']/gm)].map((m) => m[1]!);
  return specs.map((s) => relative(ROOT, resolve(dirname(file), s)).replace(/\.tsx?$/, ""));
}

const files = sourceFiles(SRC).map((f) => ({ file: relative(ROOT, f), imports: importsOf(f) }));

/** "file -> import" for each import that breaks a rule. */
function breaking(applies: (file: string) => boolean, forbidden: (target: string) => boolean): string[] {
  return files.filter((f) => applies(f.file)).flatMap((f) => f.imports.filter(forbidden).map((i) => `${f.file} -> ${i}`));
}

const isBackend = (target: string) => /^src\/stores\/(sqlite|postgres)(\/|$)/.test(target);
const isServiceOrRoute = (file: string) => /(^|[-/])(service|routes)\.tsx?$/.test(file);

describe("layering", () => {
  test("the import scan sees the codebase (it would pass vacuously otherwise)", () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.find((f) => f.file === "src/stores/sqlite/index.ts")?.imports).toContain("src/stores/sqlite/sessions");
    expect(files.find((f) => f.file === "src/context.ts")?.imports).toContain("src/stores");
    // A planted violation is caught: the rules below are not empty.
    expect(isBackend("src/stores/sqlite/users")).toBe(true);
    expect(isServiceOrRoute("src/crm/export-import/export-service.ts")).toBe(true);
    expect(isServiceOrRoute("src/team/routes.ts")).toBe(true);
  });

  test("only src/stores and src/cli import a backend's stores (src/context.ts only src/stores/index.ts)", () => {
    const outside = (f: string) => !f.startsWith("src/stores/") && !f.startsWith("src/cli/");
    expect(breaking(outside, isBackend)).toEqual([]);
  });

  test("no service or route file imports the SQLite database module", () => {
    expect(breaking(isServiceOrRoute, (t) => t === "src/db/database")).toEqual([]);
  });

  test("no feature file imports the SQLite database module: features see stores only", () => {
    const inFeature = (f: string) => FEATURES.some((x) => f.startsWith(`src/${x}/`));
    expect(breaking(inFeature, (t) => t === "src/db/database" || t === "src/db/migrate" || t === "src/db/group-commit")).toEqual([]);
  });

  test("the shared folders (src/http, src/db, src/security) import no feature and no store", () => {
    const shared = (f: string) => /^src\/(http|db|security)\//.test(f);
    const feature = (t: string) => FEATURES.some((x) => t === `src/${x}` || t.startsWith(`src/${x}/`)) || t.startsWith("src/stores");
    expect(breaking(shared, feature)).toEqual([]);
  });
});
