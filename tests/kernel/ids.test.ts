import { expect, test } from "bun:test";
import { newId, orderedId } from "../../src/kernel/ids";

test("row ids are 21 URL-safe characters and never start with '-' (a CSV formula guard would change them)", () => {
  const ids = Array.from({ length: 20_000 }, newId);
  for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{20}$/);
  expect(new Set(ids).size).toBe(ids.length);
});

test("orderedId: ids of increasing numbers sort in that order by code unit, 21 URL-safe characters, none alike", () => {
  const ns = [0, 1, 9, 10, 61, 62, 63, 3_843, 3_844, 999_999, 1_000_000, 62 ** 5, 62 ** 6 - 1];
  for (let n = 0; n < 5_000; n++) ns.push(n * 7_919);
  const ids = [...new Set(ns)].sort((a, b) => a - b).map(orderedId);
  for (let i = 1; i < ids.length; i++) expect(ids[i - 1]! < ids[i]!).toBe(true);
  for (const id of ids) expect(id).toMatch(/^[0-9A-Za-z][0-9A-Za-z_-]{20}$/);
  expect(new Set(Array.from({ length: 1_000 }, () => orderedId(5))).size).toBe(1_000);
});
