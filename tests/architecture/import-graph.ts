/**
 * The import graph of src/ and its two rules (README, "Layout"): no cycle, and no import that runs
 * up the layers. Read with TypeScript's own parser, so every form counts: `import`, `import type`,
 * `export … from`, side-effect imports, dynamic `import()` and `import("…").T` types.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

/** One import of a file: what it names, and whether it is a type-only import of named bindings. */
export interface Edge {
  /** A file under the repository (with its extension), or a package name. */
  target: string;
  /** `import type { A }` or `import { type A }` only: nothing of it is loaded at run time. */
  typeOnly: boolean;
  /** The bindings it names, when it names them (`import { A, B }`); null for default, namespace and dynamic imports. */
  names: string[] | null;
}

/** file (relative to the repository, with its extension) → the files and packages it imports. */
export interface Graph {
  files: Map<string, { local: Edge[]; packages: Edge[] }>;
}

/**
 * The layers, lowest first: a file may import its own layer or a lower one, never a higher one.
 * Infrastructure (SQLite's engine helpers in db/, keys and passwords in security/, the mail outbox
 * and its sender, the outbound guard, the configuration) sits between the kernel and HTTP: stores
 * build on it, and it knows no request. Features may import each other (no cycle); stores sit
 * above the features because they implement the store interfaces the features declare.
 */
export const LAYERS = ["kernel", "infrastructure", "http", "features", "stores", "app"] as const;
export type Layer = (typeof LAYERS)[number];

const INFRASTRUCTURE = ["db", "security", "mail", "outbound"];
const FEATURES = ["auth", "organization", "team", "crm", "security-log", "idempotency", "events", "webhooks", "tls", "metrics", "web", "operator"];

/** The layer of a file under src/, or null for a file no rule names (the test fails on those). */
export function layerOf(file: string): Layer | null {
  const m = /^src\/([^/]+)(\/|$)/.exec(file);
  if (!m) return null;
  const top = m[1]!;
  if (top === "kernel") return "kernel";
  // src/config.ts reads the environment and parses the outbound allow-list (src/outbound), so it
  // sits with the infrastructure, not in the kernel.
  if (INFRASTRUCTURE.includes(top) || top === "config.ts") return "infrastructure";
  if (top === "http") return "http";
  if (FEATURES.includes(top)) return "features";
  if (top === "stores") return "stores";
  if (top === "cli" || ["main.ts", "app.ts", "context.ts", "production.ts"].includes(top)) return "app";
  return null;
}

/** Packages a layer may not import at all (the kernel knows no web framework). */
export const FORBIDDEN_PACKAGES: Partial<Record<Layer, RegExp>> = {
  kernel: /^(elysia|@elysiajs\/)/,
  infrastructure: /^(elysia|@elysiajs\/)/,
  stores: /^(elysia|@elysiajs\/)/,
};

const SOURCE = /\.(ts|tsx)$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return SOURCE.test(e.name) && !e.name.endsWith(".d.ts") ? [p] : [];
  });
}

/** A relative specifier as the file it names (TypeScript's bundler resolution, for our own files). */
function resolveLocal(from: string, spec: string): string | null {
  const base = resolve(dirname(from), spec);
  for (const c of [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts"), join(base, "index.tsx")]) {
    if (existsSync(c) && statSync(c).isFile()) return c;
  }
  return null;
}

/** Every module `text` imports, in any form: static, type-only, re-exports, `import()` and `import("…").T`. */
export function importsOf(text: string, fileName = "x.ts"): Array<{ spec: string; typeOnly: boolean; names: string[] | null }> {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, fileName.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const out: Array<{ spec: string; typeOnly: boolean; names: string[] | null }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      const named = bindings && ts.isNamedImports(bindings) && !clause?.name ? bindings.elements : null;
      out.push({
        spec: node.moduleSpecifier.text,
        typeOnly: !!clause && (clause.isTypeOnly || (named !== null && named.length > 0 && named.every((e) => e.isTypeOnly))),
        names: named ? named.map((e) => (e.propertyName ?? e.name).text) : null,
      });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.exportClause;
      const named = clause && ts.isNamedExports(clause) ? clause.elements : null;
      out.push({
        spec: node.moduleSpecifier.text,
        typeOnly: node.isTypeOnly || (named !== null && named.length > 0 && named.every((e) => e.isTypeOnly)),
        names: named ? named.map((e) => (e.propertyName ?? e.name).text) : null,
      });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      out.push({ spec: node.moduleReference.expression.text, typeOnly: node.isTypeOnly, names: null });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteralLike(node.arguments[0])) {
      out.push({ spec: node.arguments[0].text, typeOnly: false, names: null });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      out.push({ spec: node.argument.literal.text, typeOnly: true, names: null });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** The graph of every source file under `root`/src. An import that names no file is an error. */
export function readGraph(root: string): Graph {
  const files: Graph["files"] = new Map();
  for (const abs of sourceFiles(join(root, "src"))) {
    const local: Edge[] = [];
    const packages: Edge[] = [];
    for (const { spec, typeOnly, names } of importsOf(readFileSync(abs, "utf8"), abs)) {
      if (!spec.startsWith(".")) {
        packages.push({ target: spec, typeOnly, names });
        continue;
      }
      const target = resolveLocal(abs, spec);
      if (!target) throw new Error(`${relative(root, abs)} imports ${spec}, which names no file`);
      local.push({ target: relative(root, target), typeOnly, names });
    }
    files.set(relative(root, abs), { local, packages });
  }
  return { files };
}

/** Every cycle's files (strongly connected components of two or more, or a file importing itself), each as one closed path. */
export function cycles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let next = 0;
  const edges = (f: string) => [...new Set((graph.files.get(f)?.local ?? []).map((e) => e.target))].filter((t) => graph.files.has(t));
  // Tarjan's algorithm, iterative (deep chains of imports would overflow recursion).
  for (const start of graph.files.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; i: number }> = [{ node: start, i: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const out = edges(top.node);
      if (top.i < out.length) {
        const t = out[top.i++]!;
        if (!index.has(t)) {
          index.set(t, next);
          low.set(t, next++);
          stack.push(t);
          onStack.add(t);
          work.push({ node: t, i: 0 });
        } else if (onStack.has(t)) low.set(top.node, Math.min(low.get(top.node)!, index.get(t)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!));
      }
      if (low.get(top.node) === index.get(top.node)) {
        const component: string[] = [];
        let f: string;
        do {
          f = stack.pop()!;
          onStack.delete(f);
          component.push(f);
        } while (f !== top.node);
        const selfLoop = component.length === 1 && edges(component[0]!).includes(component[0]!);
        if (component.length > 1 || selfLoop) found.push(closedPath(component, edges));
      }
    }
  }
  return found;
}

/** One closed path through a component, from its first file (by name) back to it, to print. */
function closedPath(component: string[], edges: (f: string) => string[]): string[] {
  const inside = new Set(component);
  const first = [...component].sort()[0]!;
  // Breadth-first from `first` back to `first`, inside the component: the shortest cycle through it.
  const before = new Map<string, string>();
  const queue = [first];
  while (queue.length > 0) {
    const f = queue.shift()!;
    for (const t of edges(f)) {
      if (!inside.has(t)) continue;
      if (t === first) {
        const path = [f];
        while (path[0] !== first) path.unshift(before.get(path[0]!)!);
        return [...path, first];
      }
      if (!before.has(t)) {
        before.set(t, f);
        queue.push(t);
      }
    }
  }
  return [first, first];
}

/**
 * The one import allowed to run up the layers: an Elysia plugin (a file of src/http or of a
 * feature) names the type of the context it is handed, `import type { Context } from "…/context"`.
 * The composition root builds that context and passes it to the plugins in src/app.ts; the type
 * is its ReturnType, so it can only be declared there. Type-only: nothing is loaded at run time,
 * and cycles are still checked with these edges counted.
 */
export function allowedUpward(file: string, edge: Edge): boolean {
  const from = layerOf(file);
  return (from === "http" || from === "features") && edge.target === "src/context.ts" && edge.typeOnly && edge.names?.length === 1 && edge.names[0] === "Context";
}

/** "file (layer) -> import (layer)" for every import that runs up the layers, or into a forbidden package. */
export function upwardImports(graph: Graph): string[] {
  const out: string[] = [];
  for (const [file, { local, packages }] of graph.files) {
    const from = layerOf(file);
    if (from === null) {
      out.push(`${file}: in no layer (name its folder in tests/architecture/import-graph.ts)`);
      continue;
    }
    for (const edge of local) {
      const to = layerOf(edge.target);
      if (to !== null && LAYERS.indexOf(to) > LAYERS.indexOf(from) && !allowedUpward(file, edge)) out.push(`${file} (${from}) -> ${edge.target} (${to})`);
    }
    const forbidden = FORBIDDEN_PACKAGES[from];
    for (const p of packages) if (forbidden?.test(p.target)) out.push(`${file} (${from}) -> package ${p.target}`);
  }
  return out;
}
