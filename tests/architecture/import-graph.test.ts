import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { type Edge, type Graph, cycles, importsOf, layerOf, readGraph, upwardImports } from "./import-graph";

// Issue 30: a kernel below everything, and no import that runs up the layers or closes a circle
// (README, "Layout"). Type imports count: a circle of types is still a circle a reader must untie.

const ROOT = resolve(import.meta.dir, "../..");
const graph = readGraph(ROOT);

const edge = (target: string, more: Partial<Edge> = {}): Edge => ({ target, typeOnly: false, names: null, ...more });
const synthetic = (files: Record<string, Edge[]>): Graph => ({
  files: new Map(Object.entries(files).map(([f, local]) => [f, { local, packages: [] }])),
});

describe("the import graph of src/", () => {
  test("it sees the codebase, in every import form (it would pass vacuously otherwise)", () => {
    expect(graph.files.size).toBeGreaterThan(200);
    const context = graph.files.get("src/context.ts")!;
    expect(context.local.map((e) => e.target)).toContain("src/stores/index.ts");
    // A type-only import is an edge like any other.
    expect(graph.files.get("src/auth/service.ts")!.local.find((e) => e.target === "src/kernel/principal.ts")?.typeOnly).toBe(true);
    expect(importsOf(`import type { A } from "./a";\nexport { b } from "../b";\nconst c = await import("./c");\ntype D = import("./d").D;\nimport "./e";\nimport { type F, type G } from "./f";`)).toEqual([
      { spec: "./a", typeOnly: true, names: ["A"] },
      { spec: "../b", typeOnly: false, names: ["b"] },
      { spec: "./c", typeOnly: false, names: null },
      { spec: "./d", typeOnly: true, names: null },
      { spec: "./e", typeOnly: false, names: null },
      { spec: "./f", typeOnly: true, names: ["F", "G"] },
    ]);
  });

  test("every file of src/ is in a layer", () => {
    expect([...graph.files.keys()].filter((f) => layerOf(f) === null)).toEqual([]);
  });

  test("has no cycle (type imports included)", () => {
    const found = cycles(graph).map((c) => c.join(" -> "));
    if (found.length > 0) console.error(`import cycles:\n${found.join("\n")}`);
    expect(found).toEqual([]);
  });

  test("no import runs up the layers: kernel → infrastructure → http → features → stores → app", () => {
    const up = upwardImports(graph);
    if (up.length > 0) console.error(`imports up the layers:\n${up.join("\n")}`);
    expect(up).toEqual([]);
  });

  test("the kernel imports nothing but the kernel (and no web framework)", () => {
    const out = [...graph.files].filter(([f]) => f.startsWith("src/kernel/")).flatMap(([f, { local, packages }]) => [
      ...local.filter((e) => !e.target.startsWith("src/kernel/")).map((e) => `${f} -> ${e.target}`),
      ...packages.filter((p) => /^(elysia|@elysiajs\/)/.test(p.target)).map((p) => `${f} -> ${p.target}`),
    ]);
    expect(out).toEqual([]);
  });

  test("stores import no HTTP code", () => {
    const out = [...graph.files]
      .filter(([f]) => f.startsWith("src/stores/"))
      .flatMap(([f, { local }]) => local.filter((e) => e.target.startsWith("src/http/")).map((e) => `${f} -> ${e.target}`));
    expect(out).toEqual([]);
  });
});

describe("the rules themselves, on a small made-up graph", () => {
  test("a cycle is found and printed as a closed path, type-only edges included", () => {
    const g = synthetic({
      "src/kernel/a.ts": [edge("src/kernel/b.ts")],
      "src/kernel/b.ts": [edge("src/kernel/c.ts", { typeOnly: true, names: ["C"] })],
      "src/kernel/c.ts": [edge("src/kernel/a.ts")],
      "src/kernel/d.ts": [edge("src/kernel/a.ts")],
      "src/kernel/self.ts": [edge("src/kernel/self.ts")],
    });
    const found = cycles(g).map((c) => c.join(" -> ")).sort();
    expect(found).toEqual(["src/kernel/a.ts -> src/kernel/b.ts -> src/kernel/c.ts -> src/kernel/a.ts", "src/kernel/self.ts -> src/kernel/self.ts"]);
    expect(cycles(synthetic({ "src/kernel/a.ts": [edge("src/kernel/b.ts")], "src/kernel/b.ts": [] }))).toEqual([]);
  });

  test("an upward edge is reported; downward and same-layer ones are not", () => {
    const g = synthetic({
      "src/kernel/errors.ts": [edge("src/http/core.ts", { typeOnly: true, names: ["X"] })],
      "src/http/core.ts": [edge("src/kernel/errors.ts")],
      "src/crm/service.ts": [edge("src/stores/index.ts"), edge("src/auth/service.ts"), edge("src/db/database.ts")],
      "src/stores/index.ts": [edge("src/crm/repo.ts")],
      "src/db/database.ts": [edge("src/crm/model.ts")],
      "src/somewhere/new.ts": [],
    });
    expect(upwardImports(g).sort()).toEqual([
      "src/crm/service.ts (features) -> src/stores/index.ts (stores)",
      "src/db/database.ts (infrastructure) -> src/crm/model.ts (features)",
      "src/kernel/errors.ts (kernel) -> src/http/core.ts (http)",
      "src/somewhere/new.ts: in no layer (name its folder in tests/architecture/import-graph.ts)",
    ]);
  });

  test("only `import type { Context }` from a plugin may name the composition root", () => {
    const g = synthetic({
      "src/crm/routes.ts": [edge("src/context.ts", { typeOnly: true, names: ["Context"] })],
      "src/http/core.ts": [edge("src/context.ts", { typeOnly: true, names: ["Context"] })],
      "src/crm/service.ts": [edge("src/context.ts", { typeOnly: true, names: ["Logger"] })],
      "src/auth/routes.ts": [edge("src/context.ts", { names: ["Context"] })],
      "src/kernel/log.ts": [edge("src/context.ts", { typeOnly: true, names: ["Context"] })],
    });
    expect(upwardImports(g).sort()).toEqual([
      "src/auth/routes.ts (features) -> src/context.ts (app)",
      "src/crm/service.ts (features) -> src/context.ts (app)",
      "src/kernel/log.ts (kernel) -> src/context.ts (app)",
    ]);
  });
});
