import { remembered } from "../kernel/remembered";
import { registerFormat } from "../kernel/validation";

/** 13 digits before the point, 2 after: at most 15 significant digits, exact in a double and in cents. */
export const MAX_WHOLE_DIGITS = 13;
const DECIMAL = /^(\d+)(?:\.(\d*))?$/;

/**
 * Integer cents of a decimal text ("1234.5" → 123450), or null when it is not a non-negative
 * decimal with at most 13 whole digits and 2 places. Trailing zeros past the second place are
 * not places ("1.500" is 1.50). Never goes through float arithmetic.
 */
export function centsOf(text: string): number | null {
  const m = DECIMAL.exec(text);
  if (!m) return null;
  const whole = m[1]!.replace(/^0+(?=\d)/, "");
  const frac = (m[2] ?? "").replace(/0+$/, "");
  if (whole.length > MAX_WHOLE_DIGITS || frac.length > 2) return null;
  return Number(whole) * 100 + Number(frac.padEnd(2, "0"));
}

/**
 * What centsOf accepts, as a pattern for the API description (tests/http/openapi-tools.test.ts checks
 * the two agree): leading zeros, 1 to 13 digits, and a point with at most 2 places before any
 * trailing zeros.
 */
export const MONEY_PATTERN = `^0*[0-9]{1,${MAX_WHOLE_DIGITS}}(?:\\.[0-9]{0,2}0*)?$`;
export const MAX_MONEY = 10 ** MAX_WHOLE_DIGITS - 0.01;

/** 123450 → "1234.50"; values already written are remembered (a deal list shows the same deals again and again, as toIso's dates). */
export const formatCents: (cents: number) => string = remembered(8192, (cents) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`);

/**
 * A JSON number reaches us as a double. Every valid value has at most 15 significant digits, so
 * its shortest round-trip text (String(n)) is exactly the decimal that was sent; anything that
 * needs more digits is invalid anyway, and its text then fails the check.
 */
export const decimalText = (v: unknown): unknown => (typeof v === "number" && Number.isFinite(v) ? String(v) : v);

registerFormat(
  "money",
  (v) => centsOf(v) !== null,
  "Value error, value must be an amount written like 1234.50: digits, a point (not a comma) before at most 2 decimals, never negative",
);
