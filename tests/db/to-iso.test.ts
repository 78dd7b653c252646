import { describe, expect, test } from "bun:test";
import { toIso, toIsoOrNull } from "../../src/kernel/ids";

// toIso formats each day's date part once and the time from tables (issue 15): it must write
// exactly what Date#toISOString writes, for every instant.
describe("toIso", () => {
  test("edges: the epoch, before it, day and year bounds, fractions, out of range", () => {
    const cases = [
      0, -1, 1, 999, 1000, 59_999, 3_599_999, -86_400_000, 86_399_999, 86_400_000, 951_782_400_000, 1_732_400_000_123,
      -62_167_219_200_000, -62_167_219_200_001, 253_402_300_799_999, 253_402_300_800_000, 1.5, -1.5, 8.64e15, -8.64e15,
    ];
    for (const ms of cases) expect(toIso(ms)).toBe(new Date(ms).toISOString());
  });

  test("random instants, and days alternating (the day cache)", () => {
    for (let i = 0; i < 200_000; i++) {
      const ms = Math.floor((Math.random() * 2 - 1) * 2.6e14);
      expect(toIso(ms)).toBe(new Date(ms).toISOString());
    }
    const base = 1_732_400_000_000;
    for (let i = 0; i < 5000; i++) {
      const ms = base + (i % 3) * 86_400_000 + i * 7919;
      expect(toIso(ms)).toBe(new Date(ms).toISOString());
    }
  });

  test("instants written before (the memo), also across its clearing when full", () => {
    const base = 1_732_400_000_000;
    const instants = Array.from({ length: 40_000 }, (_, i) => base + i * 104_729);
    for (let round = 0; round < 3; round++) for (const ms of instants) expect(toIso(ms)).toBe(new Date(ms).toISOString());
    for (const ms of [0, -1, 1.5, 253_402_300_799_999]) expect(toIso(ms)).toBe(new Date(ms).toISOString());
  });

  test("invalid instants throw as Date does; null stays null", () => {
    expect(() => toIso(Number.NaN)).toThrow(RangeError);
    expect(() => toIso(8.64e15 + 1)).toThrow(RangeError);
    expect(toIsoOrNull(null)).toBeNull();
  });
});
