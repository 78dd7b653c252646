import fc from "fast-check";
import { SQL_AND_FTS, badBytes, badValue, edgeString, raw, ref, refOf } from "./values";

type Schema = Record<string, any>;

/** A body as it will be sent: JSON text (possibly with markers) or bytes, and its content type. */
export interface BodySpec {
  text?: string;
  bytes?: Uint8Array;
  contentType: string | null;
  chunked?: boolean;
}

/** Values for fields whose name says what they hold: real ids and tokens as often as made-up ones. */
const BY_NAME: Record<string, () => fc.Arbitrary<unknown>> = {
  email: () => fc.oneof(ref("email"), fc.stringMatching(/^[a-z]{2,8}@[a-z]{2,6}\.test$/), fc.emailAddress(), fc.constantFrom("ADMIN@ACME.TEST", " member@acme.test ")),
  password: () => fc.oneof(fc.constant("correct horse battery"), fc.string({ minLength: 8, maxLength: 20 })),
  account_id: () => refOf("account", "account", "otherAccount", "contact"),
  contact_id: () => refOf("contact", "contact", "otherContact", "deal"),
  assigned_to: () => refOf("user", "user", "otherUser"),
  profile_id: () => refOf("profile", "otherProfile"),
  role_id: () => refOf("profile", "otherProfile"),
  session_id: () => refOf("session", "session", "deal"),
  stage: () => fc.oneof(ref("stage"), fc.constantFrom("new", "won", "lost", "trial", "NEW")),
  ids: () => fc.array(refOf("stageId", "stageId", "otherStageId", "deal"), { maxLength: 8 }),
  token: () => fc.oneof(ref("mailToken"), fc.base64String({ maxLength: 60 })),
  temp_token: () => refOf("tempToken", "tempToken", "adminToken", "refreshToken", "algNone", "expired", "foreignKey"),
  refresh_token: () => refOf("refreshToken", "adminToken", "tempToken", "tamperedToken", "algNone", "expired", "foreignKey"),
  code: () => fc.oneof(fc.stringMatching(/^[0-9]{6}$/), fc.stringMatching(/^[a-z0-9]{4}-[a-z0-9]{4}$/)),
  subdomain: () => fc.oneof(fc.stringMatching(/^[a-z][a-z0-9]{2,12}$/), fc.constantFrom("acme", "other", "www", "api", "admin", "a-b", "abc")),
  value: () => fc.oneof(fc.constantFrom("0", "1234.5", "9999999999999.99", "0.01"), fc.integer({ min: 0, max: 10_000_000 }), fc.double({ min: 0, max: 1e6, noNaN: true })),
  close_date: () => fc.oneof(fc.constant(null), fc.constantFrom("2030-01-31", "2024-02-29", "1970-01-01")),
  custom_data: () => fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
};

/** A value the schema accepts (mostly: patterns and formats are approximated). */
function valid(schema: Schema, name: string): fc.Arbitrary<unknown> {
  if (BY_NAME[name]) return BY_NAME[name]();
  if (schema.anyOf) return fc.oneof(...(schema.anyOf as Schema[]).map((s) => valid({ ...schema, anyOf: undefined, ...s }, name)));
  const type = Array.isArray(schema.type) ? schema.type : [schema.type];
  const choices: fc.Arbitrary<unknown>[] = [];
  if (type.includes("null")) choices.push(fc.constant(null));
  if (type.includes("boolean")) choices.push(fc.boolean());
  if (type.includes("integer")) choices.push(fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000 }));
  if (type.includes("array")) choices.push(schema.items?.enum ? fc.subarray(schema.items.enum as unknown[]) : fc.array(fc.string(), { maxLength: 3 }));
  if (type.includes("string")) {
    const max = Math.min(schema.maxLength ?? 30, 30);
    if (schema.format === "integer") choices.push(fc.integer({ min: 0, max: 100 }).map(String));
    else if (schema.pattern && schema.pattern !== "\\S") choices.push(fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length <= (schema.maxLength ?? 1e9)));
    else choices.push(fc.string({ minLength: Math.max(1, schema.minLength ?? 0), maxLength: Math.max(max, 1) }).filter((s) => /\S/.test(s)));
  }
  if (choices.length === 0) choices.push(fc.jsonValue({ maxDepth: 2 }));
  return fc.oneof(...choices);
}

/** An object with every required field and some optional ones, each valid. */
function validObject(schema: Schema): fc.Arbitrary<Record<string, unknown>> {
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set<string>(schema.required ?? []);
  const entries = Object.entries(props).map(([k, s]) => [k, required.has(k) ? valid(s, k) : fc.option(valid(s, k), { nil: undefined })] as const);
  return fc.record(Object.fromEntries(entries)).map((o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)));
}

type Mutation = (o: Record<string, unknown>) => void;

const setOwn = (o: Record<string, unknown>, k: string, v: unknown) => Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });

function mutation(schema: Schema): fc.Arbitrary<Mutation> {
  const keys = Object.keys(schema.properties ?? {});
  const key = keys.length ? fc.constantFrom(...keys) : fc.constant("x");
  const extraKey = fc.oneof(fc.constantFrom("tenant_id", "__proto__", "constructor", "id", "role", "is_admin", "", "emaiL"), fc.string({ maxLength: 10 }));
  return fc.oneof(
    key.map((k): Mutation => (o) => void delete o[k]),
    fc.tuple(extraKey, badValue).map(([k, v]): Mutation => (o) => void setOwn(o, k, v)),
    { weight: 4, arbitrary: fc.tuple(key, badValue).map(([k, v]): Mutation => (o) => void setOwn(o, k, v)) },
    fc.tuple(key, badBytes).map(([k, b]): Mutation => (o) => void setOwn(o, k, `${typeof o[k] === "string" ? o[k] : ""}${b}`)),
    fc.tuple(key, fc.constantFrom("\u0000", "\ud800", "\u202e", "🚀")).map(([k, c]): Mutation => (o) => void setOwn(o, k, `${typeof o[k] === "string" ? o[k] : ""}${c}`)),
  );
}

const JSON_TYPES = ["application/json", "application/json; charset=utf-8", "application/problem+json", "APPLICATION/JSON"];
const OTHER_TYPES = [
  null, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=utf-16",
  "application/jsonx", "json", ";;;", "application/xml", "*/*", "application/json, text/plain", "text/json",
];
const contentType = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...JSON_TYPES) }, { weight: 2, arbitrary: fc.constantFrom(...OTHER_TYPES) });

/** Whole bodies that are not a near-valid object at all. */
const oddBody: fc.Arbitrary<{ text?: string; bytes?: Uint8Array }> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((v) => ({ text: JSON.stringify(v) ?? "null" })),
  fc.string({ unit: "binary", maxLength: 60 }).map((text) => ({ text })),
  fc.uint8Array({ maxLength: 60 }).map((bytes) => ({ bytes })),
  raw.map((m) => ({ text: JSON.stringify(m) })),
  fc.constantFrom("", " ", "null", "[]", "{}", '"x"', "1", "true", "\ufeff{}", '{"a":1}x', "{'a':1}", '{"a":1,}', "{", "}", '{"__proto__":{"x":1}}').map((text) => ({ text })),
  edgeString.map((s) => ({ text: JSON.stringify({ [s]: s }) })),
);

/** A body for an operation: near-valid objects (mutated), valid ones, and everything else. */
export function bodyArb(schema: Schema | undefined): fc.Arbitrary<BodySpec> {
  const object = schema && (schema.properties || schema.type === "object" || schema.type?.includes?.("object"));
  const duplicateKey = (o: Record<string, unknown>, k: string) => JSON.stringify(o).replace(/^\{/, `{${JSON.stringify(k)}:123,`);
  const shaped: fc.Arbitrary<{ text?: string; bytes?: Uint8Array }> = object
    ? fc.oneof(
        { weight: 12, arbitrary: fc.tuple(validObject(schema!), fc.array(mutation(schema!), { minLength: 1, maxLength: 3 })).map(([o, ms]) => {
          for (const m of ms) m(o);
          return { text: JSON.stringify(o) };
        }) },
        { weight: 3, arbitrary: validObject(schema!).map((o) => ({ text: JSON.stringify(o) })) },
        { weight: 1, arbitrary: fc.tuple(validObject(schema!), fc.constantFrom(...(Object.keys(schema!.properties ?? {}).length ? Object.keys(schema!.properties!) : ["x"]))).map(([o, k]) => ({ text: duplicateKey(o, k) })) },
        { weight: 4, arbitrary: oddBody },
      )
    : oddBody;
  return fc.tuple(shaped, contentType, fc.nat(9)).map(([b, ct, n]) => ({ ...b, contentType: ct, chunked: n === 0 }));
}

/** Columns an import knows, and some it does not; a cell is anything, quoted or not. */
const CSV_COLUMNS = [
  "title", "account_name", "contact_name", "assignee_email", "stage", "value", "currency", "probability", "close_date", "notes", "custom_data",
  "name", "domain", "industry", "first_name", "last_name", "email", "phone", "id", "tenant_id", "TITLE", " Name ", "", "x",
];
const csvCell: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("Acme", "acme", "Deal", "10.50", "1e3", "-1", "2030-01-31", "2030-02-30", "new", "WON", "101", '{"a":1}', "[1]", "admin@acme.test", "=1+1", "'=x", "@SUM(A1)"),
  edgeString,
  raw,
  badBytes,
  fc.string({ maxLength: 20 }),
  fc.constantFrom(...SQL_AND_FTS),
);
const quoteCell = (c: string, quoted: boolean) => (quoted ? `"${c.replace(/"/g, '""')}"` : c);
const csvText: fc.Arbitrary<string> = fc
  .tuple(
    fc.array(fc.constantFrom(...CSV_COLUMNS), { minLength: 1, maxLength: 6 }),
    fc.array(fc.array(fc.tuple(csvCell, fc.boolean()), { maxLength: 7 }), { maxLength: 5 }),
    fc.constantFrom("\n", "\r\n", "\r"),
    fc.boolean(),
  )
  .map(([header, rows, eol, bom]) => (bom ? "\ufeff" : "") + [header.join(","), ...rows.map((r) => r.map(([c, q]) => quoteCell(c, q)).join(","))].join(eol));

/** A body for a CSV import: mostly CSV (odd ones too), sometimes anything else, under any content type. */
export function csvBodyArb(): fc.Arbitrary<BodySpec> {
  const type = fc.oneof({ weight: 8, arbitrary: fc.constantFrom("text/csv", "text/csv; charset=utf-8", "TEXT/CSV") }, { weight: 2, arbitrary: fc.constantFrom(...OTHER_TYPES, ...JSON_TYPES) });
  const shaped = fc.oneof({ weight: 8, arbitrary: csvText.map((text) => ({ text })) }, { weight: 2, arbitrary: oddBody }, { weight: 1, arbitrary: fc.constantFrom('a,"b\nc', '"', "title\n\"x\"y\"", "\u0000\u0000").map((text) => ({ text })) });
  return fc.tuple(shaped, type, fc.nat(9)).map(([b, ct, n]) => ({ ...b, contentType: ct, chunked: n === 0 }));
}
