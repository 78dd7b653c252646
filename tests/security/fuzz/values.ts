import fc from "fast-check";
import type { Pool } from "./world";

/**
 * Values for generated requests. A value may hold markers, filled in when the request is sent:
 * `@@REF:<pool>:<i>@@` (a real id, token or email of the world, read at send time),
 * `"@@RAW:<name>@@"` (raw JSON text no JSON.stringify can produce: 1e309, 10,000 levels, > 1 MiB)
 * and `@@BYTES:<name>@@` inside a string (bytes that are not UTF-8).
 */
export const ref = (pool: Pool) => fc.nat(15).map((i) => `@@REF:${pool}:${i}@@`);
export const refOf = (...pools: Pool[]) => fc.constantFrom(...pools).chain(ref);

const MIB = 1024 * 1024;
const nested = (open: string, close: string, depth: number, inner = "1") => open.repeat(depth) + inner + close.repeat(depth);
const RAW_BUILDERS: Record<string, () => string> = {
  inf: () => "1e309",
  negInf: () => "-1e309",
  negZero: () => "-0",
  unsafeInt: () => "9007199254740993",
  tiny: () => "1e-400",
  nan: () => "NaN",
  infinity: () => "Infinity",
  hex: () => "0x10",
  plus: () => "+1",
  leadingZero: () => "01",
  bareDot: () => ".5",
  longNumber: () => `1${"0".repeat(400)}`,
  longFraction: () => `0.${"1".repeat(400)}`,
  depth64: () => nested("[", "]", 63),
  depth65: () => nested("[", "]", 65),
  deepArrays: () => nested("[", "]", 10_000),
  deepObjects: () => nested('{"a":', "}", 10_000),
  unclosed: () => "[".repeat(10_000),
  hugeString: () => `"${"a".repeat(MIB + 64)}"`,
  bigString: () => `"${"b".repeat(300_000)}"`,
  hugeArray: () => `[${"0,".repeat(200_000)}0]`,
  undefined: () => "undefined",
  singleQuotes: () => "'x'",
  comment: () => "/* c */ 1",
};
const rawCache = new Map<string, string>();
export const rawText = (name: string) => rawCache.get(name) ?? (rawCache.set(name, RAW_BUILDERS[name]!()), rawCache.get(name)!);
export const RAW_NAMES = Object.keys(RAW_BUILDERS);
export const raw = fc.constantFrom(...RAW_NAMES).map((n) => `@@RAW:${n}@@`);

/** Byte sequences that are not UTF-8: stray continuation, overlong, surrogate, truncated, too long. */
export const BAD_BYTES: Record<string, number[]> = {
  ff: [0xff], fe: [0xfe], cont: [0x80], overlongNul: [0xc0, 0x80], overlongSlash: [0xe0, 0x80, 0xaf], surrogate: [0xed, 0xa0, 0x80],
  truncated: [0xe2, 0x82], fiveByte: [0xf8, 0x88, 0x80, 0x80, 0x80], tooHigh: [0xf4, 0x90, 0x80, 0x80], latin1: [0xe9],
};
export const badBytes = fc.constantFrom(...Object.keys(BAD_BYTES)).map((n) => `@@BYTES:${n}@@`);

export const SQL_AND_FTS = [
  "' OR 1=1 --", "'; DROP TABLE deals; --", '"', '""', "'", "NEAR(a b)", "a*", "^a", "col:term", "title:x", "AND OR NOT", "AND", "(", ")", "()",
  "\0", "%", "_", "%%", "\\", "*", "a OR b", '"unterminated', "{title}: x", "deals_fts", "- a", "a NOT b", "NEAR(", "a + b", "😀", "\u202e",
  "x".repeat(201), "y".repeat(5000), "%_%", "ion", "ca", "café", "Déal", "  ", "",
];

/** Strings that have broken parsers, validators or SQL before. */
export const edgeString = fc.oneof(
  fc.constantFrom(
    "", " ", "\u0000", "a\u0000b", "\ud800", "\udfff", "x\udc00y", "\u202eevil", "👍🏽", "👨‍👩‍👧", "\ufeff", "\u200b", "\uffff", "null", "undefined",
    "true", "0", "-1", "NaN", "1e309", "../../etc/passwd", "%00", "%zz", "<script>alert(1)</script>", "__proto__", "\n\r\t", "é".repeat(300),
    "a".repeat(10_000), "A@B.CO", " admin@acme.test ", "admin@acme.test\u0000", "2030-02-30", "9999-99-99", "1234.567", "-1.00", "99999999999999.00",
  ),
  fc.constantFrom(...SQL_AND_FTS),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.constantFrom(201, 255, 4097, 70_000).map((n) => "z".repeat(n)),
  badBytes.map((b) => `ok${b}ok`),
);

/** Anything in the wrong type, or out of range. */
export const badValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: edgeString },
  { weight: 2, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-1, 0, 101, 10_001, 2 ** 31, 2 ** 53 + 1, -0, 1.5, Number.MAX_VALUE)) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { a: 1 }, ["crm", "crm"], ["nope"]) },
  { weight: 2, arbitrary: raw },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: refOf("deal", "otherDeal", "user", "otherUser", "adminToken", "tempToken", "email") },
);

/** The metrics token of the fuzz's server (harness.ts), sent now and then by requests.ts. */
export const FUZZ_METRICS_TOKEN = "fuzz-metrics-token-0123456789abcdef0123";
