import fc from "fast-check";
import { type BodySpec, bodyArb, csvBodyArb } from "./bodies";
import type { Sent } from "./harness";
import { BAD_BYTES, FUZZ_METRICS_TOKEN, SQL_AND_FTS, edgeString, rawText, ref, refOf } from "./values";
import type { Pool, World } from "./world";

type Schema = Record<string, any>;
interface Param { name: string; in: string; schema: Schema }

/** One operation of the OpenAPI document. */
export interface Operation {
  key: string;
  method: string;
  path: string;
  params: Param[];
  body?: Schema;
  /** The body is a CSV file (the imports), not JSON. */
  csv?: boolean;
}

export function operationsOf(doc: { paths: Record<string, Record<string, any>> }): Operation[] {
  const ops: Operation[] = [];
  for (const [path, byMethod] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(byMethod)) {
      ops.push({ key: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, params: op.parameters ?? [], body: op.requestBody?.content?.["application/json"]?.schema, csv: Boolean(op.requestBody?.content?.["text/csv"]) });
    }
  }
  return ops;
}

/** A request before its markers are filled in. */
export interface RequestSpec {
  op: string;
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body?: BodySpec;
}

/** Percent-encodes as a client would; a lone surrogate (encodeURIComponent refuses it) goes raw. */
const encode = (s: string) => {
  try {
    return encodeURIComponent(s);
  } catch {
    return s;
  }
};
const BAD_ENCODINGS = ["%zz", "%", "%00", "%ff", "%e2%82", "%ed%a0%80", "%%", "%2", "+", "%C0%AE", "&", "=", "#frag"];
const badEncoding = fc.constantFrom(...BAD_ENCODINGS);

function paramValue(p: Param): fc.Arbitrary<string> {
  const s = p.schema ?? {};
  const edges = fc.constantFrom("", " ", "0", "-1", "1e3", "1.5", "101", "2147483648", "9007199254740993", "1e309", "NaN", "Infinity", "0x10", " 1", "١", "true", "null");
  let good: fc.Arbitrary<string>;
  if (s.type === "integer") good = fc.integer({ min: s.minimum ?? 0, max: s.maximum ?? 500 }).map(String);
  else if (s.type === "boolean") good = fc.constantFrom("true", "false", "1", "0", "yes", "no", "on", "off", "TRUE", "Yes", "maybe", "2");
  // A query boolean is text with a pattern of its spellings (src/kernel/paging.ts QUERY_BOOLEAN).
  else if (s.type === "string" && s.pattern) good = fc.oneof(fc.stringMatching(new RegExp(s.pattern)), fc.constantFrom("maybe", "2", "truee"));
  else if (s.enum) good = fc.oneof(fc.constantFrom(...(s.enum as string[])), fc.constantFrom(...(s.enum as string[])).map((e) => e.toUpperCase()));
  else if (p.name === "search") good = fc.oneof(fc.constantFrom(...SQL_AND_FTS), fc.string({ maxLength: 12 }), fc.constantFrom("deal", "acme", "Ada", "café"));
  else if (p.name === "stage") good = fc.oneof(ref("stage"), fc.constantFrom(...SQL_AND_FTS));
  else if (p.name === "assigned_to" || p.name === "user_id") good = refOf("user", "otherUser", "deal");
  else if (p.name === "move_to") good = fc.oneof(ref("stage"), fc.constantFrom("new", "won", "nowhere", "NEW"));
  else if (s.format === "date-time") good = fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), fc.constantFrom("2030-01-01", "2030-02-30T00:00:00Z", "2030-01-01T10:00+05:30", "yesterday"));
  else if (p.name === "action") good = fc.constantFrom("tenant.signup", "auth.login", "crm.stage_updated", "x");
  else good = fc.string({ maxLength: 12 });
  const value = fc.oneof({ weight: 5, arbitrary: good.map(encode) }, { weight: 2, arbitrary: edges.map(encode) }, { weight: 2, arbitrary: edgeString.map(encode) }, { weight: 1, arbitrary: badEncoding });
  return fc.oneof({ weight: 9, arbitrary: value }, { weight: 1, arbitrary: fc.tuple(value, badEncoding).map(([v, b]) => v + b) });
}

/** Every documented parameter (or none) with good and bad values, repeated and unknown ones, broken encodings. */
function queryArb(params: Param[]): fc.Arbitrary<string> {
  const query = params.filter((p) => p.in === "query");
  const junk = fc.oneof(
    fc.tuple(fc.string({ maxLength: 8 }).map(encode), fc.string({ maxLength: 8 }).map(encode)).map(([k, v]) => `${k}=${v}`),
    fc.constantFrom("%zz=1", "%=%", "a=%", "=x", "&&&", "x", "size", "page=", "a[b]=1", "__proto__=1", "a=1;b=2"),
    fc.constantFrom(5000, 70_000).map((n) => `q=${"x".repeat(n)}`),
  );
  const documented = query.map((p) => fc.option(paramValue(p).map((v) => `${encode(p.name)}=${v}`), { nil: undefined, freq: 2 }));
  return fc
    .tuple(fc.tuple(...documented), fc.array(junk, { maxLength: query.length ? 1 : 2 }), fc.nat(3), fc.boolean())
    .map(([pairs, extra, repeat, shuffle]) => {
      const present = pairs.filter((x): x is string => x !== undefined);
      const all = [...present, ...(present.length && repeat ? Array(repeat).fill(present[0]) : []), ...extra];
      if (shuffle) all.reverse();
      return all.join("&");
    });
}

const POOL_BY_RESOURCE: Record<string, Pool> = {
  "pipeline-stages": "stageId", deals: "deal", accounts: "account", contacts: "contact", invitations: "invitation", users: "user", providers: "provider", identities: "identity", mail: "mail",
};
const pathId = (resource: Pool): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 5, arbitrary: ref(resource) },
    { weight: 2, arbitrary: refOf("deal", "account", "contact", "user", "invitation", "otherDeal", "otherAccount", "otherContact", "otherUser", "otherInvitation", "session") },
    { weight: 3, arbitrary: fc.constantFrom("..", "%2e%2e", "%2F", "a%2Fb", "%00", "%zz", "%", "null", "0", "-1", "%F0%9F%98%80", "%ED%A0%80", "x".repeat(5000), "%27%20OR%201%3D1%20--", "%20", ";", "a:b") },
    { weight: 2, arbitrary: fc.oneof(fc.uuid(), fc.string({ maxLength: 30 }).map(encode), fc.nat().map(String)) },
  );

function pathArb(op: Operation): fc.Arbitrary<string> {
  // An identity provider's id (the sign-in flow's start, linking): the world's, another organization's, or junk.
  if (op.path.includes("{provider_id}")) {
    const id = fc.oneof({ weight: 6, arbitrary: ref("provider") }, { weight: 2, arbitrary: ref("otherProvider") }, { weight: 3, arbitrary: pathId("deal") });
    return id.map((v) => op.path.replace("{provider_id}", v));
  }
  // An organization by its subdomain (the operator console): one that exists, another, none, junk.
  if (op.path.includes("{subdomain}")) return fc.constantFrom("acme", "other", "nope", "ACME", "a".repeat(70), "..").map((sub) => op.path.replace("{subdomain}", sub));
  const m = /\/([a-z-]+)\/\{id\}/.exec(op.path);
  if (!m) return fc.constant(op.path);
  return pathId(POOL_BY_RESOURCE[m[1]!] ?? "deal").map((id) => op.path.replace("{id}", id));
}

const withCsrf = { "content-type": "application/json", origin: "http://acme.localhost:8000", "sec-fetch-site": "same-origin" };
const bearer = (p: Pool) => ({ authorization: `Bearer @@REF:${p}:0@@` });
const authArb: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 55, arbitrary: fc.constant(bearer("adminToken")) },
  { weight: 8, arbitrary: fc.constant(bearer("memberToken")) },
  { weight: 6, arbitrary: fc.constant({}) },
  { weight: 4, arbitrary: fc.constant({ ...bearer("otherToken"), "x-tenant": "acme" }) },
  // The operator's metrics token: opens GET /api/v1/metrics, nothing of an organization's.
  { weight: 3, arbitrary: fc.constant({ authorization: `Bearer ${FUZZ_METRICS_TOKEN}` }) },
  // An operator of the console: opens /api/v1/operator/… on the base domain, nothing of an organization's.
  { weight: 6, arbitrary: fc.constant(bearer("operatorToken")) },
  { weight: 3, arbitrary: fc.constantFrom("refreshToken", "tempToken", "algNone", "expired", "foreignKey", "tamperedToken").map((p) => bearer(p as Pool)) },
  {
    weight: 8,
    arbitrary: fc.oneof(
      fc.constantFrom("Bearer", "Bearer ", "Bearer a.b.c", "Basic dXNlcjpwYXNz", "bearer  @@REF:adminToken:0@@", "Bearer @@REF:adminToken:0@@ extra", "Bearer @@REF:adminToken:0@@x", "Token @@REF:adminToken:0@@", `Bearer ${"a".repeat(20_000)}`),
      fc.string({ unit: "binary-ascii", maxLength: 40 }),
    ).map((authorization) => ({ authorization })),
  },
  {
    weight: 8,
    arbitrary: fc.oneof(
      fc.constant({ cookie: "svc_session=@@REF:adminToken:0@@", ...withCsrf }),
      fc.constant({ cookie: "svc_session=@@REF:adminToken:0@@" }),
      fc.constant({ cookie: "svc_session=@@REF:adminToken:0@@", ...withCsrf, "sec-fetch-site": "cross-site" }),
      fc.constant({ cookie: "svc_session=@@REF:adminToken:0@@", ...withCsrf, origin: "https://evil.test" }),
      fc.constantFrom("svc_session=junk", "svc_session=", 'svc_session="@@REF:adminToken:0@@"', ";;==;", "svc_refresh=@@REF:refreshToken:0@@", `svc_session=${"c".repeat(9000)}`, "svc_session=%zz; svc_session=x").map((cookie) => ({ cookie })),
    ),
  },
);

const HOSTS = ["acme.localhost", "other.localhost", "nope.localhost", "evil.com", "www.localhost", "[::1]:8000", "localhost:99999", "ACME.LOCALHOST", "acme.localhost.evil.com", `${"h".repeat(300)}.localhost`, ".localhost", "a..localhost"];
const extraHeaders: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 14, arbitrary: fc.constant({}) },
  { weight: 2, arbitrary: fc.constantFrom("acme", "other", "nope", "", "ACME", " acme ", "acme,other", "x".repeat(8000), "www").map((t) => ({ "x-tenant": t })) },
  { weight: 2, arbitrary: fc.constantFrom(...HOSTS).map((host) => ({ host })) },
  {
    weight: 2,
    arbitrary: fc.constantFrom<Record<string, string>>(
      { "content-length": "99999999" }, { "x-request-id": "../../x\u00e9" }, { "user-agent": "u".repeat(30_000) }, { "x-forwarded-for": "1.2.3.4, ::1, junk" },
      { accept: "text/html" }, { origin: "null" }, { "x-http-method-override": "DELETE" }, { "accept-encoding": "gzip" }, { "x-request-id": "r".repeat(65) },
    ),
  },
  { weight: 1, arbitrary: fc.tuple(fc.string({ unit: "binary-ascii", minLength: 1, maxLength: 12 }), fc.string({ unit: "binary", maxLength: 30 })).map(([k, v]) => ({ [k]: v })) },
);

/**
 * The Idempotency-Key of a create that documents it: none mostly, a few shared keys (so that
 * retries, replays and reuses with another body happen), fresh ones, and bad ones (422).
 */
const idempotencyKeyArb: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({}) },
  { weight: 3, arbitrary: fc.constantFrom("k1", "k2", "retry-me").map((k) => ({ "idempotency-key": k })) },
  { weight: 1, arbitrary: fc.uuid().map((k) => ({ "idempotency-key": k })) },
  { weight: 2, arbitrary: fc.constantFrom("", "k".repeat(256), "a\tb", "a\u0001b", "\u007f", "a\u0085b", " ").map((k) => ({ "idempotency-key": k })) },
);
const takesIdempotencyKey = (op: Operation) => op.params.some((p) => (p as unknown as { $ref?: string }).$ref === "#/components/parameters/IdempotencyKey");

/** Requests for one operation: its path, query, headers and body, each good, near-good or bad. */
export function requestArb(op: Operation): fc.Arbitrary<RequestSpec> {
  const takesBody = op.method !== "GET" && op.method !== "HEAD";
  const body: fc.Arbitrary<BodySpec | undefined> = !takesBody
    ? fc.constant(undefined)
    : op.csv
      ? fc.oneof({ weight: 12, arbitrary: csvBodyArb() }, { weight: 1, arbitrary: fc.constant(undefined) })
      : op.body
      ? fc.oneof({ weight: 12, arbitrary: bodyArb(op.body) }, { weight: 1, arbitrary: fc.constant(undefined) })
      : fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: bodyArb(undefined) });
  const query = op.params.some((p) => p.in === "query") ? queryArb(op.params) : fc.oneof({ weight: 6, arbitrary: fc.constant("") }, { weight: 1, arbitrary: queryArb([]) });
  const key = takesIdempotencyKey(op) ? idempotencyKeyArb : fc.constant({});
  return fc.record({ path: pathArb(op), query, auth: authArb, extra: extraHeaders, key, body }).map(({ path, query, auth, extra, key, body }) => ({
    op: op.key, method: op.method, path, query, headers: { ...auth, ...extra, ...key }, body,
  }));
}

const MARKER = /"@@RAW:(\w+)@@"|@@REF:(\w+):(\d+)@@|@@BYTES:(\w+)@@/g;

/** Fills in the markers from the world as it is now; bytes when a body carries non-UTF-8. */
function fill(text: string, world: World): { text: string; bytes?: Uint8Array } {
  const parts: (string | number[])[] = [];
  let last = 0;
  for (const m of text.matchAll(MARKER)) {
    parts.push(text.slice(last, m.index));
    last = m.index! + m[0].length;
    if (m[1]) parts.push(rawText(m[1]));
    else if (m[2]) {
      const values = world.pool(m[2] as Pool);
      parts.push(values.length ? values[Number(m[3]) % values.length]! : "none");
    } else parts.push(BAD_BYTES[m[4]!]!);
  }
  parts.push(text.slice(last));
  if (parts.every((p) => typeof p === "string")) return { text: parts.join("") };
  const enc = new TextEncoder();
  const chunks = parts.map((p) => (typeof p === "string" ? enc.encode(p) : Uint8Array.from(p)));
  return { text: "", bytes: Buffer.concat(chunks) };
}

export function materialize(spec: RequestSpec, world: World): Sent {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(spec.headers)) {
    const filled = fill(v, world);
    // A header cannot carry raw bytes here; it keeps the markers' text instead.
    headers[k] = filled.bytes ? v : filled.text;
  }
  let body: string | Uint8Array | undefined;
  if (spec.body) {
    const filled = fill(spec.body.text ?? "", world);
    body = spec.body.bytes ?? filled.bytes ?? filled.text;
    if (spec.body.contentType !== null && headers["content-type"] === undefined) headers["content-type"] = spec.body.contentType;
  }
  const path = fill(spec.path, world).text;
  const query = fill(spec.query, world).text;
  return { method: spec.method, target: `${path}${query ? `?${query}` : ""}`, headers, body, chunked: spec.body?.chunked };
}

/** Requests outside the document: other methods on its paths, unknown and mangled paths. */
export function offDocumentArb(ops: Operation[]): fc.Arbitrary<RequestSpec> {
  const paths = [...new Set(ops.map((o) => o.path.replace("{id}", "@@REF:deal:0@@")))];
  const mangle = fc.constantFrom<(p: string) => string>(
    (p) => p, (p) => `${p}/`, (p) => p.replace("/api/v1", ""), (p) => p.replace("/api/v1", "/api/v2"), (p) => p.replace("/api/v1", "/API/V1"),
    (p) => p.replace(/\//g, "//"), (p) => `${p}/extra`, (p) => `${p}/..`, (p) => `${p}%2F..%2Fhealth`, (p) => `${p};x=1`, (p) => `/api/v1/${"a/".repeat(200)}`, (p) => `${p}%00`,
  );
  return fc
    .record({
      method: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND"),
      path: fc.tuple(fc.constantFrom(...paths), mangle).map(([p, m]) => m(p)),
      auth: authArb,
      body: fc.option(bodyArb(undefined), { nil: undefined }),
    })
    .map(({ method, path, auth, body }) => ({ op: "off-document", method, path, query: "", headers: auth, body: method === "GET" ? undefined : body }));
}
