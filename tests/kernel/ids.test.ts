import { expect, test } from "bun:test";
import { newId, orderedId, timeOrderedId } from "../../src/kernel/ids";

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

test("timeOrderedId: the second it was made in leads (later seconds sort after), 21 URL-safe characters, none alike", () => {
  const now = Date.UTC(2026, 10, 29, 12, 0, 0);
  const seconds = [0, 1, 59, 60, 3_600, 86_400, 365 * 86_400, 1_000 * 365 * 86_400];
  const ids = seconds.map((s) => timeOrderedId(now + s * 1000));
  for (let i = 1; i < ids.length; i++) expect(ids[i - 1]! < ids[i]!).toBe(true);
  expect(timeOrderedId(now).slice(0, 6)).toBe(orderedId(now / 1000).slice(0, 6));
  expect(timeOrderedId(now + 999).slice(0, 6)).toBe(timeOrderedId(now).slice(0, 6));
  for (const id of ids) expect(id).toMatch(/^[0-9A-Za-z]{6}[0-9A-Za-z_-]{15}$/);
  expect(new Set(Array.from({ length: 1_000 }, () => timeOrderedId(now))).size).toBe(1_000);
});
