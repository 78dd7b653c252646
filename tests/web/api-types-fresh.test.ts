import { expect, test } from "bun:test";
import { GENERATE_COMMAND, SCHEMA_FILE, generatedSchema } from "../../scripts/api-types";

/**
 * `bun run api:check` inside npm test: the web app's committed API types (web/api/schema.gen.ts)
 * are what the routes' OpenAPI document generates now, so a changed route, body or answer that
 * the web app would misread fails here until the file is regenerated.
 */
test("web/api/schema.gen.ts is what the served OpenAPI document generates", async () => {
  const committed = await Bun.file(SCHEMA_FILE).text();
  const fresh = await generatedSchema();
  if (committed !== fresh) throw new Error(`web/api/schema.gen.ts is stale: run \`${GENERATE_COMMAND}\` and commit it.`);
  expect(committed.startsWith("/**\n * GENERATED FILE: do not edit.")).toBe(true);
});
