import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { readRoutes, routesMarkdown } from "../../scripts/routes-map";
import { testApp } from "../helpers";

// docs/routes.md, the map from a URL to its code (issue 30), is generated: it must be the one the
// source gives today, and the routes it reads from the source must be exactly those the app serves.

const ROOT = resolve(import.meta.dir, "../..");
const generated = routesMarkdown(ROOT);

describe("docs/routes.md", () => {
  test("is fresh (else run `bun run routes:map` and commit the file)", () => {
    const have = readFileSync(resolve(ROOT, "docs/routes.md"), "utf8");
    expect(have).toBe(generated);
  });

  test("lists exactly the routes the built app answers", async () => {
    const t = testApp({ backend: "sqlite" });
    try {
      const served = (t.app.routes as Array<{ method: string; path: string }>).map((r) => `${r.method} ${r.path}`).sort();
      const mapped = readRoutes(ROOT).map((r) => `${r.method} ${r.path}`).sort();
      expect(served.length).toBeGreaterThan(80);
      expect(mapped).toEqual(served);
    } finally {
      await t.close();
    }
  });

  test("names a service for every route that calls one, and every store it names exists", () => {
    const text = generated;
    expect(text).not.toContain("(unresolved)");
    expect(text).toMatch(/\| POST \| `\/api\/v1\/auth\/signup` \| src\/auth\/signup\/routes\.ts:\d+ \| src\/organization\/service\.ts:\d+ \(createOrganization\)[^|]* \| [^|]*\btenants\b[^|]* \|/);
    expect(text).toMatch(/\| stages \| src\/crm\/pipeline-repo\.ts \(StagesStore\) \| src\/stores\/sqlite\/stages\.ts \| src\/stores\/postgres\/stages\.ts \|/);
  });
});
