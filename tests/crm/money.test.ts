import { describe, expect, test } from "bun:test";
import { centsOf, formatCents } from "../../src/crm/money";

// formatCents remembers the values it wrote (issue 15): what it answers must not depend on that.
describe("formatCents", () => {
  const reference = (cents: number) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;

  test("edges: zero, under one unit, round units, the largest value", () => {
    for (const [cents, text] of [[0, "0.00"], [5, "0.05"], [99, "0.99"], [100, "1.00"], [123450, "1234.50"], [99999999999999, "999999999999.99"]] as const)
      expect(formatCents(cents)).toBe(text);
  });

  test("values written before (the memo), also across its clearing when full, and back through centsOf", () => {
    const values = Array.from({ length: 20_000 }, (_, i) => i * 7919 + (i % 100));
    for (let round = 0; round < 3; round++)
      for (const cents of values) {
        const text = formatCents(cents);
        expect(text).toBe(reference(cents));
        if (round === 0) expect(centsOf(text)).toBe(cents);
      }
  });
});
