import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { browserHeaders } from "../helpers";
import { answerOf } from "./isolation/attempt-kit";
import { ATTEMPTS, type Attempt, type Sent } from "./isolation/attempts";
import { buildWorld, idsOf, snapshot, type World } from "./isolation/world";
import { testSql } from "../support/sql";

/**
 * Tenant isolation (issue 6, item 2; docs/interface.md#tenancy): tenant B tries tenant A's ids,
 * subdomain and credentials on every operation of the OpenAPI document that takes an id, lists
 * rows or writes rows, and gets exactly the contract's refusal; no answer shows anything of A,
 * no list or total counts A's rows, and A's data is byte for byte what it was.
 */

type Operation = { method: string; path: string; op: Record<string, any> };

let w: World;
let operations: Operation[];
let before: Record<string, string[]>;
/** Everything of A that must never reach B: its ids (tenant, users, sessions, rows) and its word. */
let secrets: string[];
let auditMark: number;
const stats = { attempts: 0, ops: new Set<string>(), foreignRows: 0, leaks: [] as string[] };

beforeAll(async () => {
  w = await buildWorld();
  const doc = (await w.t.json("GET", "/api/v1/openapi.json")).body;
  operations = Object.entries<Record<string, any>>(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op: resolveOp(doc, op) })),
  );
  before = await snapshot(w.t, w.a.tenantId);
  auditMark = (await testSql(w.t.ctx).get<{ n: number }>("SELECT coalesce(max(id), 0) AS n FROM audit_log"))!.n;
  secrets = [...(await idsOf(w.t, w.a.tenantId)), w.a.word];
});

afterAll(() => {
  console.log(`tenant-isolation: ${stats.attempts} cross-tenant attempts over ${stats.ops.size} operations, ${stats.foreignRows} foreign rows, ${stats.leaks.length} leaks`);
  w?.t.close();
});

/** The operation with its request body's and 2xx answer's schemas resolved. */
function resolveOp(doc: any, op: any) {
  const deref = (s: any) => (s?.$ref ? doc.components.schemas[s.$ref.split("/").pop()] : s);
  const ok = Object.entries<any>(op.responses ?? {}).filter(([s]) => s.startsWith("2"));
  return {
    ...op,
    body: deref(op.requestBody?.content?.["application/json"]?.schema),
    answers: ok.map(([status, r]) => ({ status: Number(status), schema: deref(r.content?.["application/json"]?.schema) })),
  };
}

const key = (o: Operation) => `${o.method} ${o.path}`;
const ID_LIKE = /(^id$|_id$|^assigned_to$|token)/;
// An organization's credentials (bearer or cookie); the operator's metrics token is no organization's.
const isAuthenticated = (o: Operation) => (o.op.security ?? []).some((s: Record<string, unknown>) => "bearer" in s || "cookie" in s);
const hasPathParam = (o: Operation) => o.path.includes("{");
/**
 * The operator console's operations belong to no organization: on an organization's host they are
 * 404 and an organization's credentials are refused, so crossed subdomains (403 tenant_mismatch)
 * do not apply. The table's attempts-operator.ts sends organizations' credentials at each of them.
 */
const isOperatorConsole = (o: Operation) => o.path.startsWith("/api/v1/operator/");
const isList = (o: Operation) =>
  o.method === "GET" && o.op.answers.some((a: any) => a.schema?.type === "array" || (a.schema?.properties?.items && a.schema?.properties?.total));
const idFields = (o: Operation): string[] => [
  ...Object.keys(o.op.body?.properties ?? {}).filter((f) => ID_LIKE.test(f)),
  ...(o.op.parameters ?? []).filter((p: any) => p.in === "query" && ID_LIKE.test(p.name)).map((p: any) => p.name),
];
/** Operations that create or change rows: a 201, or an answer that carries a tenant_id. */
const writesRows = (o: Operation) =>
  (o.method === "POST" || o.method === "PATCH") && o.op.answers.some((a: any) => a.status === 201 || a.schema?.properties?.tenant_id);

/** Sends one attempt; checks the contract's answer, A's secrets and foreign rows. */
async function run(a: Attempt): Promise<void> {
  const sent: Sent = await a.send(w);
  const r = await answerOf(w, sent);
  stats.attempts++;
  stats.ops.add(a.op);
  const got = { what: a.what, status: r.status, code: a.expect.code !== undefined ? r.body?.code : undefined, type: a.expect.type ? r.body?.detail?.[0]?.type : undefined };
  expect(got).toEqual({ what: a.what, status: a.expect.status, code: a.expect.code, type: a.expect.type });

  // Nothing of A in the answer that the request did not itself carry (a 422 may echo its input).
  const asked = JSON.stringify(sent).toLowerCase();
  const answered = `${JSON.stringify(r.body)} ${r.headers.get("set-cookie") ?? ""}`.toLowerCase();
  const leaked = secrets.filter((s) => answered.includes(s.toLowerCase()) && !asked.includes(s.toLowerCase()));
  if (leaked.length) stats.leaks.push(`${a.op} (${a.what}): ${leaked.join(", ")}`);
  expect({ what: a.what, leaked }).toEqual({ what: a.what, leaked: [] });

  const items: unknown[] | undefined = Array.isArray(r.body) ? r.body : r.body?.items;
  if (items) {
    const foreign = items.filter((i) => secrets.some((s) => JSON.stringify(i).includes(s))).length;
    stats.foreignRows += foreign;
    expect({ what: a.what, foreign }).toEqual({ what: a.what, foreign: 0 });
  }
  await a.check?.(r.body, w);
}

/** A's id for a path parameter of an operation (for refusals that must precede any lookup). */
function aIdFor(path: string): string {
  if (path.includes("/invitations/")) return w.a.invitations.pending.id;
  if (path.startsWith("/api/v1/users/")) return w.a.member.id;
  if (path.includes("/accounts/")) return w.a.accountId;
  if (path.includes("/contacts/")) return w.a.contactId;
  if (path.includes("/jobs/")) return w.a.jobId;
  return w.a.dealIds[0]!;
}

/** Every authenticated operation, with B's token on A's subdomain and A's token on B's. */
function crossedCredentials(o: Operation): Attempt[] {
  const path = o.path.replace(/\{[^}]+\}/g, () => aIdFor(o.path));
  const body = o.method === "GET" || o.method === "DELETE" ? undefined : {};
  const mismatch = { status: 403, code: "tenant_mismatch" };
  const make = (what: string, opts: Sent["o"]): Attempt => ({ op: key(o), what: `${key(o)}: ${what}`, send: () => ({ method: o.method, path, o: { body, ...opts } }), expect: mismatch });
  return [
    make("B's token, Host alpha.localhost", { token: w.b.admin.access, tenant: "alpha" }),
    make("B's token, X-Tenant: alpha", { token: w.b.admin.access, headers: { "x-tenant": "alpha" } }),
    make("B's token, Host ALPHA.LocalHost:8000", { token: w.b.admin.access, headers: { host: "ALPHA.LocalHost:8000" } }),
    make("B's token, Host bravo.localhost with X-Tenant: alpha", { token: w.b.admin.access, tenant: "bravo", headers: { "x-tenant": "alpha" } }),
    make("B's member's token, Host alpha.localhost", { token: w.b.member.access, tenant: "alpha" }),
    make("A's token, Host bravo.localhost", { token: w.a.admin.access, tenant: "bravo" }),
    make("A's token, X-Tenant: bravo", { token: w.a.admin.access, headers: { "x-tenant": "bravo" } }),
    make("A's member's token, Host bravo.localhost", { token: w.a.member.access, tenant: "bravo" }),
    make("A's svc_session cookie on B's host", {
      tenant: "bravo",
      cookies: { svc_session: w.a.admin.access },
      headers: body === undefined ? {} : browserHeaders("http://bravo.localhost:8000"),
    }),
  ];
}

describe("the table covers the API", () => {
  test("every operation that takes an id, lists rows or writes rows has cross-tenant attempts", () => {
    const covered = new Set(ATTEMPTS.map((a) => a.op));
    const withTenantId = new Set(ATTEMPTS.filter((a) => a.tenantIdInBody).map((a) => a.op));
    const known = new Set(operations.map(key));
    const missing: string[] = [];
    for (const o of operations) {
      const reasons = [
        hasPathParam(o) && "path parameter",
        isList(o) && "lists rows",
        idFields(o).length > 0 && `id-like fields ${idFields(o).join(", ")}`,
        !isAuthenticated(o) && o.path !== "/api/v1/health" && o.path !== "/api/v1/health/ready" && "public (gets no crossed-credential attempts)",
      ].filter(Boolean);
      if (reasons.length && !covered.has(key(o))) missing.push(`${key(o)}: ${reasons.join("; ")}`);
      if (writesRows(o) && !withTenantId.has(key(o))) missing.push(`${key(o)}: writes rows, but no attempt sends A's tenant_id`);
    }
    expect(missing).toEqual([]);
    // And the table names only operations that exist.
    expect([...covered].filter((op) => !known.has(op))).toEqual([]);
    // A sanity floor, so that a broken OpenAPI reading cannot make this pass vacuously.
    expect(operations.filter(hasPathParam).length).toBeGreaterThanOrEqual(11);
    expect(operations.filter(isList).length).toBeGreaterThanOrEqual(7);
    expect(operations.filter(writesRows).length).toBeGreaterThanOrEqual(10);
  });
});

describe("crossed credentials and subdomains: 403 tenant_mismatch on every authenticated operation", () => {
  test("each authenticated operation of the OpenAPI document", async () => {
    const authenticated = operations.filter((o) => isAuthenticated(o) && !isOperatorConsole(o));
    expect(authenticated.length).toBeGreaterThanOrEqual(25);
    for (const o of authenticated) for (const a of crossedCredentials(o)) await run(a);
  });
});

describe("B reaches for A's ids, subdomain and tokens", () => {
  // Consecutive rows of one operation make one test, in the table's order (its last rows must run last).
  const groups: Attempt[][] = [];
  for (const a of ATTEMPTS) {
    const last = groups.at(-1);
    if (last && last[0]!.op === a.op) last.push(a);
    else groups.push([a]);
  }
  for (const [n, group] of groups.entries()) {
    test(`${n + 1}. ${group[0]!.op} (${group.length})`, async () => {
      for (const a of group) await run(a);
    });
  }
});

describe("A is untouched", () => {
  test("every row of A is as it was before B's attempts", async () => {
    const after = await snapshot(w.t, w.a.tenantId);
    for (const table of Object.keys(before)) expect({ table, rows: after[table] }).toEqual({ table, rows: before[table] });
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
  });

  test("B's attempts leave at most a refusal in A's audit log, and nothing of A in anyone else's", async () => {
    const rows = (await testSql(w.t.ctx).all("SELECT tenant_id, action, user_id, detail FROM audit_log WHERE id > ?1", auditMark)) as Array<Record<string, string | null>>;
    // A's security log may record that A's credentials or host were tried (an operator wants to
    // know), but only as a refusal.
    const inA = rows.filter((r) => r.tenant_id === w.a.tenantId).map((r) => r.action);
    expect(inA.filter((a) => !/(failure|invalid|mismatch|refused)/.test(a ?? ""))).toEqual([]);
    const elsewhere = rows.filter((r) => r.tenant_id !== w.a.tenantId).map((r) => JSON.stringify(r));
    expect(elsewhere.filter((r) => secrets.some((s) => r.includes(s)))).toEqual([]);
  });

  test("A's credentials that B presented still work on A (nothing was spent or revoked)", async () => {
    const host = { tenant: "alpha" };
    for (const s of [w.a.admin, w.a.member]) expect((await w.t.json("GET", "/api/v1/auth/me", { ...host, token: s.access })).status).toBe(200);
    expect((await w.t.json("POST", "/api/v1/auth/2fa/verify", { ...host, body: { temp_token: w.a.tempToken, code: w.code() } })).status).toBe(200);
    expect((await w.t.json("POST", "/api/v1/auth/magic-verify", { ...host, body: { token: w.a.magicToken } })).status).toBe(200);
    expect((await w.t.json("POST", "/api/v1/auth/refresh", { ...host, body: { refresh_token: w.a.admin.refresh } })).status).toBe(200);
    // B spending its own member's sign-in attempts on the shared address does not lock A's.
    for (let i = 0; i < 10; i++) await w.t.json("POST", "/api/v1/auth/login", { tenant: "bravo", body: { email: w.b.member.email, password: "not the password" } });
    expect((await w.t.json("POST", "/api/v1/auth/login", { tenant: "bravo", body: { email: w.b.member.email, password: w.b.member.password } })).status).toBe(429);
    const a2fa = await w.t.json("POST", "/api/v1/auth/login", { ...host, body: { email: w.a.member.email, password: w.a.member.password } });
    expect({ status: a2fa.status, requires_2fa: a2fa.body.requires_2fa }).toEqual({ status: 200, requires_2fa: true });
    const accepted = await w.t.json("POST", "/api/v1/auth/invitations/accept", { ...host, body: { token: w.a.invitations.pending.token, password: "correct horse battery" } });
    expect({ status: accepted.status, tenant: accepted.body?.user?.tenant_id }).toEqual({ status: 201, tenant: w.a.tenantId });
  });

  test("the summary: no foreign rows, no leaks", () => {
    expect(stats.foreignRows).toBe(0);
    expect(stats.leaks).toEqual([]);
    expect(stats.attempts).toBeGreaterThan(200);
  });
});
