import { expect, test } from "bun:test";
import { newId } from "../../src/kernel/ids";

test("row ids are 21 URL-safe characters and never start with '-' (a CSV formula guard would change them)", () => {
  const ids = Array.from({ length: 20_000 }, newId);
  for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{20}$/);
  expect(new Set(ids).size).toBe(ids.length);
});
