/**
 * Nothing in the repository cites a document the repository does not hold. The interface was
 * first written down in two files kept outside it (SPEC.md and CONTRACT.md, cited by "§" section);
 * its rules now live in docs/interface.md, and comments point there (or at the OpenAPI document).
 * A reader of this repository alone must be able to follow every pointer, so this test fails on
 * any mention of those two files or their sections, on any path into the folder that held them,
 * and on any docs/interface.md anchor that names no section of it.
 *
 * "§" stays allowed where it cites something public or in the tracker: "RFC 6238 §5.2",
 * "issue 13 §2e".
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
const SELF = relative(ROOT, import.meta.path);

/** Folders that are not the repository's own text: dependencies, builds, data, run outputs. */
const SKIPPED_DIRS = new Set([".git", "node_modules", "dist", "data", "test-artifacts", "bench/results"]);
const SKIPPED_FILES = /\.(?:db|db-wal|db-shm|png|jpg|jpeg|gif|ico|woff2?|ttf|gz|zip)$/i;

/** Every text file of the repository, as paths relative to its root. */
function repositoryFiles(dir = ROOT): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const rel = relative(ROOT, path);
    if (SKIPPED_DIRS.has(rel) || SKIPPED_DIRS.has(name)) continue;
    const st = statSync(path);
    if (st.isDirectory()) out.push(...repositoryFiles(path));
    else if (st.isFile() && !SKIPPED_FILES.test(name) && st.size < 4 * 1024 * 1024) out.push(rel);
  }
  return out;
}

/** What a "§" may follow: a public standard or an issue of the tracker, the number included. */
const ALLOWED_SECTION_OWNER = /(?:\bRFC \d+|\b[Ii]ssue \d+,?)\s*$/;
/** A line break inside a comment, with the next line's comment marker: "RFC 6238\n * §5.2" reads as one. */
const COMMENT_BREAK = /\s*\n\s*(?:\*|\/\/|--|#)?\s*/g;

/** The outside citations in one file's text: `line: text` for each. */
export function outsideCitations(text: string): string[] {
  const found: string[] = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    const where = `${i + 1}: ${line.trim().slice(0, 160)}`;
    if (/\b(?:spec|contract)\.md\b/i.test(line) || /\b(?:SPEC|CONTRACT)\b/.test(line) || /shared\/spec\b/.test(line)) {
      found.push(where);
      return;
    }
    for (let at = line.indexOf("§"); at !== -1; at = line.indexOf("§", at + 1)) {
      const before = `${lines.slice(Math.max(0, i - 1), i).join("\n")}\n${line.slice(0, at)}`.replace(COMMENT_BREAK, " ");
      if (!ALLOWED_SECTION_OWNER.test(before)) {
        found.push(where);
        return;
      }
    }
  });
  return found;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} -]/gu, "")
    .replace(/ /g, "-");

const INTERFACE = "docs/interface.md";
const interfaceAnchors = new Set(
  readFileSync(join(ROOT, INTERFACE), "utf8")
    .split("\n")
    .filter((l) => /^#{1,6} /.test(l))
    .map((l) => anchorOf(l.replace(/^#+ /, ""))),
);

/** Anchors a text names in docs/interface.md: `interface.md#a`, and `#b` in `interface.md#a, #b`. */
export function namedAnchors(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/interface\.md((?:#[a-z0-9-]+)(?:, #[a-z0-9-]+)*)/g)) {
    for (const a of m[1]!.split(/,\s*/)) out.push(a.replace(/^#/, ""));
  }
  return out;
}

const files = repositoryFiles().filter((f) => f !== SELF);
const texts = files.map((f) => [f, readFileSync(join(ROOT, f), "utf8")] as const);

describe("no citation of files the repository does not hold", () => {
  test("the scan sees the repository: its sources, tests, web app, docs and README", () => {
    for (const f of ["src/main.ts", "web/main.tsx", "tests/helpers.ts", "bench", "scripts/test.ts", INTERFACE, "README.md"]) {
      expect(files.some((x) => x === f || x.startsWith(`${f}/`))).toBe(true);
    }
  });

  test("no file mentions SPEC.md, CONTRACT.md, their sections or their folder", () => {
    const problems = texts.flatMap(([f, text]) => outsideCitations(text).map((p) => `${f}:${p}`));
    expect(problems).toEqual([]);
  });

  test("every docs/interface.md anchor named anywhere is a section of it", () => {
    const broken = texts.flatMap(([f, text]) => namedAnchors(text).filter((a) => !interfaceAnchors.has(a)).map((a) => `${f}: #${a}`));
    expect(broken).toEqual([]);
  });

  test("the checks notice what they are for, and let public sections through", () => {
    const bad = [
      "// The deal list (CONTRACT §10).",
      "/** SPEC.md's Invitation, field for field. */",
      " * the contract's shapes, see spec.md",
      "as SPEC §8 says",
      "the bounds of §10",
      "const tables = '../shared/spec/SPEC.md';",
      "a bare § 4 reference",
    ];
    for (const line of bad) expect({ line, found: outsideCitations(line).length }).toEqual({ line, found: 1 });
    const good = [
      "// RFC 6238 §5.2: no replay",
      "(RFC 9110 §15.5.2: a 401 MUST carry WWW-Authenticate)",
      "names refuse control characters (issue 13 §2e)",
      " * the window around now (RFC 6238\n * §5.2: a step once accepted never is again)",
      "SPEC_DEAL, SUSPECT, specification, contracts",
      "import { config } from \"../shared/config\";",
    ];
    for (const text of good) expect({ text, found: outsideCitations(text) }).toEqual({ text, found: [] });
    expect(namedAnchors("(docs/interface.md#the-deal-list, #crm-records) and [CSRF](interface.md#csrf)")).toEqual(["the-deal-list", "crm-records", "csrf"]);
    expect(anchorOf("Users, roles and profiles")).toBe("users-roles-and-profiles");
    expect(interfaceAnchors.has("the-deal-list")).toBe(true);
  });
});
