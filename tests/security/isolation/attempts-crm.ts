import { expect } from "bun:test";
import { SORT_FIELDS } from "../../../src/crm/model";
import { type Attempt, asB, req, notFound, ownPage, emptyPage, landedInB, A_SEARCHES, csvImport } from "./attempt-kit";
import { type World, finishedJob } from "./world";
import { testSql } from "../../support/sql";

/** A summary of B's deals only: its total is B's count, and no group names one of A's users. */
async function ownSummary(body: any, w: World): Promise<void> {
  const n = Number((await testSql(w.t.ctx).get<{ n: number }>("SELECT count(*) AS n FROM deals WHERE tenant_id = ?1", w.b.tenantId))!.n);
  expect(body.total).toBe(n);
  expect(body.groups.reduce((s: number, g: { count: number }) => s + g.count, 0)).toBe(n);
  const keys = body.groups.map((g: { key: string | null }) => g.key);
  for (const id of [w.a.admin.id, w.a.member.id, w.a.stage.key]) expect(keys).not.toContain(id);
}

/** The CRM: stages, deals, accounts and contacts across tenants. */
export const CRM_ATTEMPTS: Attempt[] = [
  // ---- CRM: stages ----
  { op: "GET /api/v1/crm/pipeline-stages", what: "list stages", send: (w) => req("GET", "/crm/pipeline-stages", asB(w)), expect: { status: 200 }, check: ownPage("pipeline_stages") },

  // ---- CRM: deals ----
  { op: "GET /api/v1/crm/deals", what: "list deals", send: (w) => req("GET", "/crm/deals?size=100", asB(w)), expect: { status: 200 }, check: ownPage("deals") },
  { op: "GET /api/v1/crm/deals", what: "list deals, no tenant named", send: (w) => req("GET", "/crm/deals?size=100", { token: w.b.admin.access }), expect: { status: 200 }, check: ownPage("deals") },
  { op: "GET /api/v1/crm/deals", what: "B's member lists deals", send: (w) => req("GET", "/crm/deals?size=100", { token: w.b.member.access, tenant: "bravo" }), expect: { status: 200 }, check: ownPage("deals") },
  // An account's and a contact's pages: A's record ids as filters list none of A's deals.
  { op: "GET /api/v1/crm/deals", what: "account_id = A's account", send: (w) => req("GET", `/crm/deals?account_id=${w.a.accountId}`, asB(w)), expect: { status: 200 }, check: emptyPage },
  { op: "GET /api/v1/crm/deals", what: "contact_id = A's contact", send: (w) => req("GET", `/crm/deals?contact_id=${w.a.contactId}&search=a`, asB(w)), expect: { status: 200 }, check: emptyPage },
  { op: "GET /api/v1/crm/accounts/{id}/activities", what: "read A's account's timeline", send: (w) => req("GET", `/crm/accounts/${w.a.accountId}/activities`, asB(w)), expect: notFound },
  { op: "GET /api/v1/crm/accounts/{id}/activities", what: "B's member reads A's account's timeline", send: (w) => req("GET", `/crm/accounts/${w.a.accountId}/activities`, { token: w.b.member.access }), expect: notFound },
  { op: "GET /api/v1/crm/contacts/{id}/activities", what: "read A's contact's timeline", send: (w) => req("GET", `/crm/contacts/${w.a.contactId}/activities`, asB(w)), expect: notFound },
  { op: "GET /api/v1/crm/contacts/{id}/activities", what: "B's member reads A's contact's timeline", send: (w) => req("GET", `/crm/contacts/${w.a.contactId}/activities`, { token: w.b.member.access }), expect: notFound },
  { op: "GET /api/v1/crm/deals", what: "mine=true", send: (w) => req("GET", "/crm/deals?mine=true", asB(w)), expect: { status: 200 }, check: ownPage("deals", (w) => `assigned_to = '${w.b.admin.id}'`) },
  ...A_SEARCHES.map(
    (search): Attempt => ({
      op: "GET /api/v1/crm/deals",
      what: `search deals for "${search}"`,
      send: (w) => req("GET", `/crm/deals?search=${encodeURIComponent(search)}`, asB(w)),
      expect: { status: 200 },
      check: emptyPage,
    }),
  ),
  ...(["admin", "member"] as const).map(
    (who): Attempt => ({
      op: "GET /api/v1/crm/deals",
      what: `assigned_to = A's ${who}`,
      send: (w) => req("GET", `/crm/deals?assigned_to=${w.a[who].id}`, asB(w)),
      expect: { status: 200 },
      check: emptyPage,
    }),
  ),
  { op: "GET /api/v1/crm/deals", what: "stage = A's own stage key", send: (w) => req("GET", `/crm/deals?stage=${w.a.stage.key}`, asB(w)), expect: { status: 200 }, check: emptyPage },
  // The board's summary: B's counts only, whatever names A's data.
  { op: "GET /api/v1/crm/deals/summary", what: "summary by stage", send: (w) => req("GET", "/crm/deals/summary", asB(w)), expect: { status: 200 }, check: ownSummary },
  { op: "GET /api/v1/crm/deals/summary", what: "summary by assignee", send: (w) => req("GET", "/crm/deals/summary?group_by=assigned_to", asB(w)), expect: { status: 200 }, check: ownSummary },
  ...[...A_SEARCHES.map((s) => `search=${encodeURIComponent(s)}`), "stage=quokka-stage", "group_by=assigned_to&assigned_to=A"].map(
    (query): Attempt => ({
      op: "GET /api/v1/crm/deals/summary",
      what: `summary with ${query}`,
      send: (w) => req("GET", `/crm/deals/summary?${query.replace("assigned_to=A", `assigned_to=${w.a.member.id}`)}`, asB(w)),
      expect: { status: 200 },
      check: (body: any) => expect(body.total).toBe(0),
    }),
  ),
  ...SORT_FIELDS.flatMap((field) =>
    (["asc", "desc"] as const).map(
      (dir): Attempt => ({
        op: "GET /api/v1/crm/deals",
        what: `sorted by ${field} ${dir}`,
        send: (w) => req("GET", `/crm/deals?size=100&sort_by=${field}&sort_dir=${dir}`, asB(w)),
        expect: { status: 200 },
        check: ownPage("deals"),
      }),
    ),
  ),
  ...(
    [
      ["A's account_id", (w: World) => ({ account_id: w.a.accountId }), notFound],
      ["A's contact_id", (w: World) => ({ account_id: w.b.accountId, contact_id: w.a.contactId }), notFound],
      ["A's member as assigned_to", (w: World) => ({ account_id: w.b.accountId, assigned_to: w.a.member.id }), notFound],
      ["A's stage key", (w: World) => ({ account_id: w.b.accountId, stage: w.a.stage.key }), { status: 422, type: "literal_error" }],
    ] as const
  ).map(([what, body, expected]): Attempt => ({ op: "POST /api/v1/crm/deals", what: `create a deal with ${what}`, send: (w) => req("POST", "/crm/deals", { ...asB(w), body: { title: "Wombat x", ...body(w) } }), expect: expected })),
  {
    op: "POST /api/v1/crm/deals",
    what: "create a deal naming A's tenant_id and a deal id of A",
    send: (w) => req("POST", "/crm/deals", { ...asB(w), body: { title: "Wombat planted", account_id: w.b.accountId, tenant_id: w.a.tenantId, id: w.a.dealIds[0] } }),
    expect: { status: 201 },
    check: (b, w) => {
      landedInB(b, w);
      expect(b.id).not.toBe(w.a.dealIds[0]);
    },
    tenantIdInBody: true,
  },
  ...[0, 1, 2].flatMap((i): Attempt[] => [
    { op: "GET /api/v1/crm/deals/{id}", what: `read A's deal ${i}`, send: (w) => req("GET", `/crm/deals/${w.a.dealIds[i]}`, asB(w)), expect: notFound },
    { op: "GET /api/v1/crm/deals/{id}", what: `B's member reads A's deal ${i}`, send: (w) => req("GET", `/crm/deals/${w.a.dealIds[i]}`, { token: w.b.member.access }), expect: notFound },
    { op: "PATCH /api/v1/crm/deals/{id}", what: `change A's deal ${i}`, send: (w) => req("PATCH", `/crm/deals/${w.a.dealIds[i]}`, { ...asB(w), body: { title: "Hijacked", account_id: w.b.accountId } }), expect: notFound },
    { op: "DELETE /api/v1/crm/deals/{id}", what: `delete A's deal ${i}`, send: (w) => req("DELETE", `/crm/deals/${w.a.dealIds[i]}`, asB(w)), expect: notFound },
  ]),
  ...[0, 1].flatMap((i): Attempt[] => [
    { op: "GET /api/v1/crm/deals/{id}/activities", what: `read A's deal ${i}'s timeline`, send: (w) => req("GET", `/crm/deals/${w.a.dealIds[i]}/activities`, asB(w)), expect: notFound },
    { op: "GET /api/v1/crm/deals/{id}/activities", what: `B's member reads A's deal ${i}'s timeline`, send: (w) => req("GET", `/crm/deals/${w.a.dealIds[i]}/activities`, { token: w.b.member.access }), expect: notFound },
    { op: "POST /api/v1/crm/deals/{id}/notes", what: `add a note to A's deal ${i}`, send: (w) => req("POST", `/crm/deals/${w.a.dealIds[i]}/notes`, { ...asB(w), body: { body: "Wombat was here" } }), expect: notFound },
  ]),
  {
    op: "GET /api/v1/crm/deals/{id}/activities",
    what: "B's own deal's timeline holds only B's entries",
    send: (w) => req("GET", `/crm/deals/${w.b.dealIds[0]}/activities?size=100`, asB(w)),
    expect: { status: 200 },
    check: (b, w) => {
      expect(JSON.stringify(b)).not.toContain(w.a.word);
      expect(b.items.length).toBeGreaterThan(0);
    },
  },
  {
    op: "POST /api/v1/crm/deals/{id}/notes",
    what: "add a note to B's deal naming A's tenant_id, A's deal and A's note id",
    send: (w) => req("POST", `/crm/deals/${w.b.dealIds[0]}/notes`, { ...asB(w), body: { body: "Wombat note", tenant_id: w.a.tenantId, deal_id: w.a.dealIds[0], id: w.a.noteId } }),
    expect: { status: 201 },
    check: async (b, w) => {
      expect(b.deal_id).toBe(w.b.dealIds[0]);
      expect(b.id).not.toBe(w.a.noteId);
      const row = await testSql(w.t.ctx).get<{ tenant_id: string }>("SELECT tenant_id FROM deal_notes WHERE id = ?", b.id);
      expect(row?.tenant_id).toBe(w.b.tenantId);
    },
    tenantIdInBody: true,
  },
  { op: "PATCH /api/v1/crm/notes/{id}", what: "change A's note", send: (w) => req("PATCH", `/crm/notes/${w.a.noteId}`, { ...asB(w), body: { body: "Hijacked" } }), expect: notFound },
  { op: "PATCH /api/v1/crm/notes/{id}", what: "B's member changes A's note", send: (w) => req("PATCH", `/crm/notes/${w.a.noteId}`, { token: w.b.member.access, body: { body: "Hijacked" } }), expect: notFound },
  { op: "DELETE /api/v1/crm/notes/{id}", what: "delete A's note", send: (w) => req("DELETE", `/crm/notes/${w.a.noteId}`, asB(w)), expect: notFound },
  { op: "PATCH /api/v1/crm/deals/{id}", what: "an empty change of A's deal", send: (w) => req("PATCH", `/crm/deals/${w.a.dealIds[0]}`, { ...asB(w), body: {} }), expect: notFound },
  ...(
    [
      ["A's account_id", (w: World) => ({ account_id: w.a.accountId }), notFound],
      ["A's contact_id", (w: World) => ({ contact_id: w.a.contactId }), notFound],
      ["A's member as assigned_to", (w: World) => ({ assigned_to: w.a.member.id }), notFound],
      ["A's stage key", (w: World) => ({ stage: w.a.stage.key }), { status: 422, type: "literal_error" }],
    ] as const
  ).map(([what, body, expected]): Attempt => ({ op: "PATCH /api/v1/crm/deals/{id}", what: `move B's deal to ${what}`, send: (w) => req("PATCH", `/crm/deals/${w.b.dealIds[0]}`, { ...asB(w), body: body(w) }), expect: expected })),
  {
    op: "PATCH /api/v1/crm/deals/{id}",
    what: "change B's deal naming A's tenant_id",
    send: (w) => req("PATCH", `/crm/deals/${w.b.dealIds[1]}`, { ...asB(w), body: { notes: "still wombat", tenant_id: w.a.tenantId } }),
    expect: { status: 200 },
    check: landedInB,
    tenantIdInBody: true,
  },

  // ---- CRM: accounts and contacts ----
  ...(["accounts", "contacts"] as const).flatMap((kind): Attempt[] => {
    const table = kind;
    const idOf = (w: World, t: "a" | "b") => (kind === "accounts" ? w[t].accountId : w[t].contactId);
    const create = (w: World) => (kind === "accounts" ? { name: "Wombat Two" } : { first_name: "Wombat", last_name: "Two" });
    return [
      { op: `GET /api/v1/crm/${kind}`, what: `list ${kind}`, send: (w) => req("GET", `/crm/${kind}?size=100`, asB(w)), expect: { status: 200 }, check: ownPage(table) },
      ...["quokka", "qu", "quokka.example", "quokka@contact"].map(
        (search): Attempt => ({
          op: `GET /api/v1/crm/${kind}`,
          what: `search ${kind} for "${search}"`,
          send: (w) => req("GET", `/crm/${kind}?search=${encodeURIComponent(search)}`, asB(w)),
          expect: { status: 200 },
          check: emptyPage,
        }),
      ),
      {
        op: `POST /api/v1/crm/${kind}`,
        what: `create naming A's tenant_id and A's id`,
        send: (w) => req("POST", `/crm/${kind}`, { ...asB(w), body: { ...create(w), tenant_id: w.a.tenantId, id: idOf(w, "a") } }),
        expect: { status: 201 },
        check: (b, w) => {
          landedInB(b, w);
          expect(b.id).not.toBe(idOf(w, "a"));
        },
        tenantIdInBody: true,
      },
      { op: `GET /api/v1/crm/${kind}/{id}`, what: `read A's ${kind}`, send: (w) => req("GET", `/crm/${kind}/${idOf(w, "a")}`, asB(w)), expect: notFound },
      { op: `PATCH /api/v1/crm/${kind}/{id}`, what: `change A's ${kind}`, send: (w) => req("PATCH", `/crm/${kind}/${idOf(w, "a")}`, { ...asB(w), body: create(w) }), expect: notFound },
      { op: `DELETE /api/v1/crm/${kind}/{id}`, what: `delete A's ${kind}`, send: (w) => req("DELETE", `/crm/${kind}/${idOf(w, "a")}`, asB(w)), expect: notFound },
      {
        op: `PATCH /api/v1/crm/${kind}/{id}`,
        what: `rename B's ${kind} (its deals follow) naming A's tenant_id`,
        send: (w) => req("PATCH", `/crm/${kind}/${idOf(w, "b")}`, { ...asB(w), body: { ...(kind === "accounts" ? { name: "Wombat Corp 2" } : { last_name: "Persona" }), tenant_id: w.a.tenantId } }),
        expect: { status: 200 },
        check: landedInB,
        tenantIdInBody: true,
      },
    ];
  }),
  {
    op: "POST /api/v1/crm/contacts",
    what: "create a contact at A's account",
    send: (w) => req("POST", "/crm/contacts", { ...asB(w), body: { first_name: "Wombat", account_id: w.a.accountId } }),
    expect: notFound,
  },
  {
    op: "PATCH /api/v1/crm/contacts/{id}",
    what: "move B's contact to A's account",
    send: (w) => req("PATCH", `/crm/contacts/${w.b.contactId}`, { ...asB(w), body: { account_id: w.a.accountId } }),
    expect: notFound,
  },

  // ---- CRM: CSV export and import (issue 16) ----
  { op: "GET /api/v1/crm/deals/export", what: "export deals", send: (w) => req("GET", "/crm/deals/export", asB(w)), expect: { status: 200 }, check: ownPage("deals") },
  ...SORT_FIELDS.map(
    (field): Attempt => ({
      op: "GET /api/v1/crm/deals/export",
      what: `export deals sorted by ${field}`,
      send: (w) => req("GET", `/crm/deals/export?sort_by=${field}&sort_dir=desc`, asB(w)),
      expect: { status: 200 },
      check: ownPage("deals"),
    }),
  ),
  ...(["admin", "member"] as const).map(
    (who): Attempt => ({
      op: "GET /api/v1/crm/deals/export",
      what: `export deals assigned_to = A's ${who}`,
      send: (w) => req("GET", `/crm/deals/export?assigned_to=${w.a[who].id}`, asB(w)),
      expect: { status: 200 },
      check: (b) => expect(b).toEqual([]),
    }),
  ),
  { op: "GET /api/v1/crm/deals/export", what: "export deals in A's stage", send: (w) => req("GET", `/crm/deals/export?stage=${w.a.stage.key}`, asB(w)), expect: { status: 200 }, check: (b) => expect(b).toEqual([]) },
  ...(["deals", "accounts", "contacts"] as const).flatMap((kind): Attempt[] => [
    ...A_SEARCHES.map(
      (search): Attempt => ({
        op: `GET /api/v1/crm/${kind}/export`,
        what: `export ${kind} searching "${search}"`,
        send: (w) => req("GET", `/crm/${kind}/export?search=${encodeURIComponent(search)}`, asB(w)),
        expect: { status: 200 },
        check: (b) => expect(b).toEqual([]),
      }),
    ),
    { op: `GET /api/v1/crm/${kind}/export`, what: `B's member exports ${kind}`, send: (w) => req("GET", `/crm/${kind}/export`, { token: w.b.member.access, tenant: "bravo" }), expect: { status: 200 }, check: ownPage(kind) },
    {
      op: `POST /api/v1/crm/${kind}/import`,
      what: `B's member imports ${kind}`,
      send: (w) => req("POST", `/crm/${kind}/import?dry_run=true`, { token: w.b.member.access, tenant: "bravo", raw: "name\nX\n", headers: { "content-type": "text/csv" } }),
      expect: { status: 403, code: "forbidden" },
    },
  ]),
  // Names are matched in B's own rows only: A's account, contact, member and stage are unknown in B.
  {
    op: "POST /api/v1/crm/deals/import",
    what: "import deals naming A's account, contact, stage and member",
    send: (w) => csvImport(w, "deals", `title,account_name,contact_name,stage\nWombat x,Quokka Corp,Quokka Person,${w.a.stage.key}\n`, "dry_run=true"),
    expect: { status: 200 },
    check: (b) => expect(b.errors.map((e: { column: string }) => e.column).sort()).toEqual(["stage"]),
  },
  {
    op: "POST /api/v1/crm/deals/import",
    what: "import a deal naming A's account without create_missing",
    send: (w) => csvImport(w, "deals", "title,account_name\nWombat x,Quokka Corp\n", "dry_run=true"),
    expect: { status: 200 },
    check: (b) => expect(b).toMatchObject({ error_count: 1, errors: [{ line: 2, column: "account_name" }], created: { deals: 0, accounts: 0 } }),
  },
  {
    op: "POST /api/v1/crm/deals/import",
    what: "import a deal into B, with B's account, naming A's tenant_id and a deal id of A as columns",
    send: (w) => csvImport(w, "deals", `title,account_name,id,tenant_id\nWombat imported,Wombat Corp,${w.a.dealIds[0]},${w.a.tenantId}\n`, ""),
    // tenant_id is no column of ours: the file is refused whole, and nothing lands anywhere.
    expect: { status: 422, type: "csv_row_invalid" },
    check: (b) => expect(b.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([["body", 1, "tenant_id"]]),
    tenantIdInBody: true,
  },
  {
    op: "POST /api/v1/crm/deals/import",
    what: "import a deal into B naming A's deal id",
    send: (w) => csvImport(w, "deals", `id,title,account_name\n${w.a.dealIds[0]},Wombat imported,Wombat Imported Co\n`, "create_missing=true"),
    // A's id names no deal of B: the row adds one, with an id of its own; A's deal is untouched.
    expect: { status: 202 },
    check: async (b, w) => {
      expect(await finishedJob(w.t, asB(w), b.id)).toMatchObject({ status: "succeeded", added: 1, updated: 0 });
      const row = (await testSql(w.t.ctx).get("SELECT id, tenant_id FROM deals WHERE title = 'Wombat imported'")) as { id: string; tenant_id: string };
      expect(row.tenant_id).toBe(w.b.tenantId);
      expect(row.id).not.toBe(w.a.dealIds[0]);
    },
  },
  {
    op: "POST /api/v1/crm/contacts/import",
    what: "import a contact naming A's account, A's tenant_id ignored as no column",
    send: (w) => csvImport(w, "contacts", "first_name,account_name\nWombat,Quokka Corp\n", "dry_run=true"),
    expect: { status: 200 },
    check: (b) => expect(b.errors).toEqual([{ line: 2, column: "account_name", message: expect.any(String) }]),
  },
  {
    op: "POST /api/v1/crm/accounts/import",
    what: "import an account into B",
    send: (w) => csvImport(w, "accounts", "name,domain\nWombat Imports,wombat-imports.example\n", ""),
    expect: { status: 202 },
    check: async (b, w) => {
      expect(await finishedJob(w.t, asB(w), b.id)).toMatchObject({ status: "succeeded", added: 1 });
      const row = (await testSql(w.t.ctx).get("SELECT tenant_id FROM accounts WHERE name = 'Wombat Imports'")) as { tenant_id: string };
      expect(row.tenant_id).toBe(w.b.tenantId);
    },
  },

  // ---- CRM: import jobs ----
  { op: "GET /api/v1/crm/jobs/{id}", what: "A's import job", send: (w) => req("GET", `/crm/jobs/${w.a.jobId}`, asB(w)), expect: notFound },
  { op: "GET /api/v1/crm/jobs/{id}", what: "A's import job, as B's member", send: (w) => req("GET", `/crm/jobs/${w.a.jobId}`, { token: w.b.member.access, tenant: "bravo" }), expect: notFound },
  {
    op: "GET /api/v1/crm/jobs",
    what: "list import jobs",
    send: (w) => req("GET", "/crm/jobs?size=100", asB(w)),
    expect: { status: 200 },
    check: async (b, w) => {
      expect(b.items.length).toBeGreaterThan(0);
      expect(b.items.map((j: { id: string }) => j.id)).not.toContain(w.a.jobId);
      const own = (await testSql(w.t.ctx).all("SELECT id FROM crm_jobs WHERE tenant_id = ?1", w.b.tenantId)) as Array<{ id: string }>;
      expect(b.items.map((j: { id: string }) => j.id).sort()).toEqual(own.map((j) => j.id).sort());
    },
  },

  // ---- CRM: bulk changes (issue 32) ----
  ...([
    ["A's deals by id, set stage", (w: World) => ({ ids: w.a.dealIds, set: { stage: "lost" } })],
    ["A's deals by id, delete", (w: World) => ({ ids: w.a.dealIds, delete: true })],
    ["A's word as the filter's search, delete", (w: World) => ({ filter: { search: w.a.word }, delete: true })],
    ["A's stage and A's admin as the filter", (w: World) => ({ filter: { stage: [w.a.stage.key], assigned_to: w.a.admin.id }, set: { stage: "won" } })],
  ] as const).map(
    ([what, body]): Attempt => ({
      op: "POST /api/v1/crm/deals/bulk",
      what,
      send: (w) => req("POST", "/crm/deals/bulk", { ...asB(w), body: body(w) }),
      expect: { status: 202 },
      check: async (b, w) => {
        const job = await finishedJob(w.t, asB(w), b.id);
        expect(job).toMatchObject({ status: "succeeded", total: 0, updated: 0 });
        const left = await testSql(w.t.ctx).all<{ stage: string }>("SELECT stage FROM deals WHERE tenant_id = ?1 ORDER BY seq", w.a.tenantId);
        expect(left.map((d) => d.stage)).toEqual([w.a.stage.key, "won", "new"]);
      },
    }),
  ),
  { op: "POST /api/v1/crm/deals/bulk", what: "assign to A's admin", send: (w) => req("POST", "/crm/deals/bulk", { ...asB(w), body: { ids: w.b.dealIds, set: { assigned_to: w.a.admin.id } } }), expect: { status: 422, type: "value_error" } },
  { op: "POST /api/v1/crm/deals/bulk", what: "move to A's stage", send: (w) => req("POST", "/crm/deals/bulk", { ...asB(w), body: { ids: w.b.dealIds, set: { stage: w.a.stage.key } } }), expect: { status: 422, type: "literal_error" } },
  { op: "POST /api/v1/crm/jobs/{id}/undo", what: "undo A's import job", send: (w) => req("POST", `/crm/jobs/${w.a.jobId}/undo`, asB(w)), expect: notFound },
  { op: "POST /api/v1/crm/jobs/{id}/undo", what: "undo A's import job, as B's member", send: (w) => req("POST", `/crm/jobs/${w.a.jobId}/undo`, { token: w.b.member.access, tenant: "bravo" }), expect: notFound },

  // Last, because it gives B a stage whose key carries A's word: stage keys are per tenant, so
  // A's key is free in B, and A's tenant_id is ignored.
  {
    op: "POST /api/v1/crm/pipeline-stages",
    what: "create a stage with A's key, naming A's tenant_id",
    send: (w) => req("POST", "/crm/pipeline-stages", { ...asB(w), body: { key: w.a.stage.key, name: "Copied", tenant_id: w.a.tenantId } }),
    expect: { status: 201 },
    check: (b, w) => {
      landedInB(b, w);
      expect(b.id).not.toBe(w.a.stage.id);
    },
    tenantIdInBody: true,
  },
];
