import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { SORT_FIELDS } from "../../../src/crm/model";
import { csvLine, unguard } from "../../../src/kernel/csv";
import { MAX_IMPORT_BYTES } from "../../../src/http/body";
import { clock, login } from "../../auth/support";
import { testApp } from "../../helpers";
import { type CrmOrg, type Deal, addUser, crmOrg, referenceSort } from "../support";
import { insertUser, testSql } from "../../support/sql";

const c = clock();
const t = testApp({ now: c.now });
let org: CrmOrg;
let other: CrmOrg;
let deals: Deal[] = [];
let zoe: string;

/** A download's rows as objects (the header names the fields). */
async function download(o: CrmOrg, path: string) {
  const res = await t.request("GET", `/api/v1/crm${path}`, { token: o.token });
  const bytes = new Uint8Array(await res.arrayBuffer());
  const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${text}`);
  // Ids are guarded like any cell (one may start with "-"): the apostrophe is taken off to compare them.
  const rows = (parse(text, { bom: true, columns: true }) as Array<Record<string, string>>).map((r): Record<string, string> => ({ ...r, id: unguard(r.id!) }));
  return { res, text, rows };
}

const upload = (o: CrmOrg, kind: string, csv: string | Uint8Array, query = "", headers: Record<string, string> = {}) =>
  t.json("POST", `/api/v1/crm/${kind}/import${query ? `?${query}` : ""}`, { token: o.token, raw: csv, headers: { "content-type": "text/csv", ...headers } });

/** A real import: 202 with a job, then the job once it has finished. */
async function imported(o: CrmOrg, kind: string, csv: string, query = "") {
  const r = await upload(o, kind, csv, query);
  expect(r.status).toBe(202);
  expect(r.body).toMatchObject({ kind, status: "running", total: expect.any(Number), done: 0 });
  return finished(o, r.body.id as string);
}
async function finished(o: CrmOrg, id: string) {
  for (let i = 0; i < 2000; i++) {
    const j = await t.json("GET", `/api/v1/crm/jobs/${id}`, { token: o.token });
    expect(j.status).toBe(200);
    if (j.body.status !== "running") return j.body;
    await Bun.sleep(5);
  }
  throw new Error(`job ${id} still running`);
}

beforeAll(async () => {
  org = await crmOrg(t, "exporg");
  other = await crmOrg(t, "imporg");
  zoe = await addUser(t, org.tenant.id, "zoe@exporg.test", "Zoë Zimmer");
  await addUser(t, other.tenant.id, "zoe@exporg.test", "Zoe in other");
  await addUser(t, other.tenant.id, "admin@exporg.test", null);
  const acme = await org.account("Acme", { domain: "acme.test" });
  const evil = await org.account("=HYPERLINK(\"http://x\")");
  const jane = await org.contact("Jane", "Doe", { account_id: acme.id, email: "jane@acme.test" });
  const specs: Array<Record<string, unknown>> = [
    { title: "Zeta, with comma", account_id: acme.id, value: "9.00", stage: "won", probability: 90, close_date: "2030-03-01", assigned_to: zoe, contact_id: jane.id },
    { title: "alpha \"quoted\"", account_id: evil.id, value: "10.00", stage: "new", notes: "two\nlines", custom_data: { source: "fair" } },
    { title: "+1 formula", account_id: acme.id, value: "1000000.5", stage: "qualified", probability: 50, close_date: "2030-01-15" },
    { title: "@mention", account_id: evil.id, value: "0", stage: "proposal", contact_id: jane.id, assigned_to: org.user.id },
    { title: "-minus", account_id: acme.id, value: "99.99", stage: "negotiation", probability: 10, assigned_to: zoe },
  ];
  for (const [i, s] of specs.entries()) {
    if (i % 2 === 0) c.advance(1000);
    deals.push(await org.deal(s));
  }
  // Enough rows that the walk takes several chunks in every order.
  for (let i = 0; i < 2100; i++) {
    deals.push(await org.deal({ title: `bulk ${i % 37}`, account_id: acme.id, value: String(i % 11), probability: i % 3 === 0 ? null : i % 100 }));
  }
}, 120_000);
afterAll(() => t.close());

describe("export", () => {
  test("deals: every row in the list's default order, headers of a download", async () => {
    const { res, rows, text } = await download(org, "/deals/export");
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    // The core's headers reach a streamed answer too.
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="deals-\d{4}-\d{2}-\d{2}\.csv"$/);
    expect(text.startsWith("\uFEFFid,title,value,currency,stage,stage_name,")).toBe(true);
    expect(rows.length).toBe(deals.length);
    expect(rows.map((r) => r.id)).toEqual(referenceSort(deals, "created_at", "desc"));
    const zeta = rows.find((r) => r.id === deals[0]!.id)!;
    expect(zeta).toMatchObject({ title: "Zeta, with comma", value: "9.00", stage: "won", stage_name: "Won", probability: "90", account_name: "Acme", contact_name: "Jane Doe", assignee_email: "zoe@exporg.test", assignee_name: "Zoë Zimmer" });
    const alpha = rows.find((r) => r.id === deals[1]!.id)!;
    expect(alpha).toMatchObject({ title: 'alpha "quoted"', notes: "two\nlines", custom_data: '{"source":"fair"}' });
  });

  test("every cell of every line is what csvCell writes of the deal as the API shows it", async () => {
    const { text } = await download(org, "/deals/export");
    const lines = text.replace(/^\uFEFF/, "").split("\r\n");
    // The header, then one line per deal: quoted line breaks (notes) are inside a line here, not between.
    const body = lines.slice(1).join("\r\n");
    const stageNames = new Map((await t.json("GET", "/api/v1/crm/pipeline-stages", { token: org.token })).body.map((s: { key: string; name: string }) => [s.key, s.name]));
    const expected = referenceSort(deals, "created_at", "desc").map((id) => {
      const d = deals.find((x) => x.id === id)!;
      return csvLine([
        d.id, d.title, d.value, d.currency, d.stage, stageNames.get(d.stage) ?? null, d.probability, d.close_date, d.account_name, d.contact_name,
        d.assignee_name ?? null, d.assignee_email ?? null, d.notes, d.custom_data === null ? null : JSON.stringify(d.custom_data), d.created_at, d.updated_at,
        null,
      ]);
    });
    expect(body).toBe(expected.join(""));
  });

  test("formula guard: cells starting with = + - @ get an apostrophe", async () => {
    const { rows } = await download(org, "/deals/export?search=formula");
    expect(rows.map((r) => r.title)).toEqual(["'+1 formula"]);
    const all = (await download(org, "/deals/export")).rows;
    expect(all.find((r) => r.id === deals[3]!.id)!.title).toBe("'@mention");
    expect(all.find((r) => r.id === deals[4]!.id)!.title).toBe("'-minus");
    expect(all.find((r) => r.id === deals[1]!.id)!.account_name).toBe("'=HYPERLINK(\"http://x\")");
  });

  test("every sort order and direction matches the list's (ties by id, nulls last)", async () => {
    for (const field of SORT_FIELDS) {
      for (const dir of ["asc", "desc"] as const) {
        const { rows } = await download(org, `/deals/export?sort_by=${field}&sort_dir=${dir}`);
        expect({ field, dir, ids: rows.map((r) => r.id) }).toEqual({ field, dir, ids: referenceSort(deals, field, dir) });
      }
    }
  });

  test("filters: stage, assignee, mine, unassigned, search; page and size do not cut it", async () => {
    const ids = async (q: string) => (await download(org, `/deals/export?${q}`)).rows.map((r) => r.id).sort();
    const want = (f: (d: Deal) => boolean) => deals.filter(f).map((d) => d.id).sort();
    expect(await ids("stage=won&stage=proposal")).toEqual(want((d) => d.stage === "won" || d.stage === "proposal"));
    expect(await ids(`assigned_to=${zoe}`)).toEqual(want((d) => d.assigned_to === zoe));
    expect(await ids("mine=true")).toEqual(want((d) => d.assigned_to === org.user.id));
    expect((await ids("unassigned=true")).length).toBe(deals.filter((d) => d.assigned_to === null).length);
    expect(await ids("search=BULK 3")).toEqual(want((d) => d.title.toLowerCase().includes("bulk 3")));
    expect((await ids("page=2&size=5")).length).toBe(deals.length);
    expect(await ids("stage=nosuchstage")).toEqual([]);
    const bad = await t.json("GET", "/api/v1/crm/deals/export?sort_by=nope", { token: org.token });
    expect(bad.status).toBe(422);
  });

  test("accounts and contacts, with their search; another tenant's rows never appear", async () => {
    const accounts = (await download(org, "/accounts/export")).rows;
    expect(accounts.map((a) => a.name).sort()).toEqual(["'=HYPERLINK(\"http://x\")", "Acme"]);
    expect((await download(org, "/accounts/export?search=acme")).rows.map((a) => a.domain)).toEqual(["acme.test"]);
    const contacts = (await download(org, "/contacts/export?search=jane")).rows;
    expect(contacts).toEqual([expect.objectContaining({ first_name: "Jane", last_name: "Doe", email: "jane@acme.test", account_name: "Acme" })]);
    expect((await download(other, "/deals/export")).rows).toEqual([]);
    expect((await download(other, "/contacts/export")).rows).toEqual([]);
  });
});

describe("import", () => {
  test("round trip: an export imported into another organization gives the same rows", async () => {
    const exported = (await download(org, "/deals/export?sort_by=title")).text;
    const dry = await upload(other, "deals", exported, "dry_run=true&create_missing=true");
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ dry_run: true, rows: deals.length, valid_rows: deals.length, error_count: 0, errors: [] });
    expect(dry.body.created).toEqual({ deals: deals.length, accounts: 2, contacts: 1 });
    expect((await download(other, "/deals/export")).rows).toEqual([]);
    const done = await imported(other, "deals", exported, "create_missing=true");
    expect(done).toMatchObject({ status: "succeeded", total: deals.length, done: deals.length, added: deals.length, updated: 0, unchanged: 0, error_count: 0 });
    const fields = ["title", "value", "currency", "stage", "probability", "close_date", "account_name", "contact_name", "assignee_email", "notes", "custom_data"];
    // Same titles tie-break by id, which differs between the two: compare the rows as sorted sets.
    const pick = (rows: Array<Record<string, string>>) => rows.map((r) => JSON.stringify(fields.map((f) => r[f]))).sort();
    const mine = (await download(org, "/deals/export?sort_by=title")).rows;
    const theirs = (await download(other, "/deals/export?sort_by=title")).rows;
    expect(pick(theirs)).toEqual(pick(mine));
    expect(new Set(theirs.map((r) => r.id)).size).toBe(deals.length);
    expect(theirs.some((r) => mine.some((m) => m.id === r.id))).toBe(false);
    // Names matched, not created again: a second import reuses the accounts and contact.
    const again = await upload(other, "deals", exported, "dry_run=1&create_missing=true");
    expect(again.body.created).toEqual({ deals: deals.length, accounts: 0, contacts: 0 });
  });

  test("all or none: one bad row and nothing is written; a dry run lists every error", async () => {
    const csv = [
      "Title,Account_Name,Value,Stage,Probability,Close_Date,Assignee_Email,Contact_Name",
      "Good one,acme,12.5,Won,50,2030-01-01,ZOE@exporg.test,jane doe",
      "Bad value,Acme,12.345,new,,,,",
      ",Acme,1,new,101,2030-02-30,nobody@x.test,",
      "Unknown stage,Acme,1,trial,,,,",
      "New account,Brand New Inc,1,,,,,",
    ].join("\n");
    const before = (await download(org, "/deals/export")).rows.length;
    const dry = await upload(org, "deals", csv, "dry_run=true");
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ rows: 5, valid_rows: 1, error_count: 7 });
    const at = (line: number) => dry.body.errors.filter((e: { line: number }) => e.line === line).map((e: { column: string }) => e.column).sort();
    expect(at(2)).toEqual([]);
    expect(at(3)).toEqual(["value"]);
    expect(at(4)).toEqual(["assignee_email", "close_date", "probability", "title"]);
    expect(at(5)).toEqual(["stage"]);
    expect(at(6)).toEqual(["account_name"]);
    const real = await upload(org, "deals", csv);
    expect(real.status).toBe(422);
    expect(real.body.detail).toContainEqual(expect.objectContaining({ loc: ["body", 3, "value"], type: "csv_row_invalid" }));
    expect((await download(org, "/deals/export")).rows.length).toBe(before);
    const audits = async () => (await testSql(t.ctx).all("SELECT action, user_id, detail FROM audit_log WHERE tenant_id = ?1 AND action = 'crm.import'", org.tenant.id)) as Array<{ detail: string }>;
    expect(await audits()).toEqual([]);
    // Fixed, it goes in whole; names match in any case, the stage by its name too.
    const fixed = [csv.split("\n")[0], csv.split("\n")[1], "Fixed value,Acme,12.34,new,,,,"].join("\n");
    const ok = await imported(org, "deals", fixed);
    expect(ok).toMatchObject({ status: "succeeded", added: 2 });
    // One audit row for the import, in its transaction: who, what kind, how many; no contents.
    expect(await audits()).toEqual([{ action: "crm.import", user_id: org.user.id, detail: JSON.stringify({ kind: "deals", deals: 2, accounts: 0, contacts: 0 }) }] as never);
    const rows = (await download(org, "/deals/export?search=good one")).rows;
    expect(rows).toEqual([expect.objectContaining({ stage: "won", account_name: "Acme", contact_name: "Jane Doe", assignee_email: "zoe@exporg.test", value: "12.50" })]);
  });

  test("all or none, written as read: rows and the accounts and contacts they created are undone by a later bad row", async () => {
    const csv = ["title,account_name,contact_name,value", "First,Made Up Co,Mia Made,1", "Second,Made Up Co,,2", "Third,Other New Co,,not money"].join("\n");
    const counts = async () => ({
      deals: (await testSql(t.ctx).get<{ n: number }>("SELECT count(*) AS n FROM deals WHERE tenant_id = ?1", org.tenant.id))!.n,
      accounts: (await testSql(t.ctx).get<{ n: number }>("SELECT count(*) AS n FROM accounts WHERE tenant_id = ?1", org.tenant.id))!.n,
      contacts: (await testSql(t.ctx).get<{ n: number }>("SELECT count(*) AS n FROM contacts WHERE tenant_id = ?1", org.tenant.id))!.n,
      next: (await testSql(t.ctx).get<{ next_deal: number }>("SELECT next_deal FROM crm_tenants WHERE tenant_id = ?1", org.tenant.id))!.next_deal,
    });
    const before = await counts();
    const real = await upload(org, "deals", csv, "create_missing=true");
    expect(real.status).toBe(422);
    expect(real.body.detail).toEqual([expect.objectContaining({ loc: ["body", 4, "value"] })]);
    expect(await counts()).toEqual(before);
    const dry = await upload(org, "deals", csv.split("\n").slice(0, 3).join("\n"), "dry_run=true&create_missing=true");
    expect(dry.body.created).toEqual({ deals: 2, accounts: 1, contacts: 1 });
    expect(await counts()).toEqual(before);
  });

  test("the header: unknown, repeated and missing columns are errors of line 1", async () => {
    const r = await upload(org, "deals", "title,tittle,title\nx,y,z\n", "dry_run=true");
    expect(r.body.errors).toEqual([
      { line: 1, column: "tittle", message: expect.stringContaining("Unknown column") },
      { line: 1, column: "title", message: "This column appears twice." },
      { line: 1, column: "account_name", message: "This column is required." },
    ]);
    const ragged = await upload(org, "accounts", "name,domain\nA\n", "dry_run=true");
    expect(ragged.body.errors).toEqual([{ line: 2, column: null, message: "Expected 2 cells, found 1." }]);
    const broken = await upload(org, "accounts", 'name\n"unclosed\n', "dry_run=true");
    expect(broken.body.errors[0]).toMatchObject({ column: null, message: expect.stringContaining("not valid CSV") });
    const empty = await upload(org, "accounts", "", "dry_run=true");
    expect(empty.body.errors[0]).toMatchObject({ line: 1 });
  });

  test("accounts and contacts import; a guarded cell comes back as typed", async () => {
    const r = await imported(other, "accounts", "name,domain,industry\n'=Sum corp,sum.test,Math\nPlain,,\n");
    expect(r).toMatchObject({ status: "succeeded", added: 2 });
    const names = (await download(other, "/accounts/export?search=sum")).rows;
    expect(names).toEqual([expect.objectContaining({ name: "'=Sum corp", domain: "sum.test", industry: "Math" })]);
    expect((await t.json("GET", "/api/v1/crm/accounts?search=sum", { token: other.token })).body.items[0].name).toBe("=Sum corp");
    const noAcc = await upload(other, "contacts", "first_name,last_name,email,account_name\nAnn,Lee,ANN@X.TEST,Nowhere Ltd\n", "dry_run=true");
    expect(noAcc.body.errors).toEqual([{ line: 2, column: "account_name", message: expect.stringContaining("import with missing accounts and contacts created") }]);
    const c2 = await imported(other, "contacts", "first_name,last_name,email,account_name\nAnn,Lee,ANN@X.TEST,Nowhere Ltd\n", "create_missing=true");
    expect(c2).toMatchObject({ status: "succeeded", added: 1 });
    expect((await download(other, "/contacts/export?search=ann")).rows[0]).toMatchObject({ email: "ann@x.test", account_name: "Nowhere Ltd" });
  });

  test("admins only; text/csv only; 50 MB; UTF-8", async () => {
    const hash = await t.ctx.hasher.hash("member password");
    await insertUser(t.ctx, {
      id: "transfer-member", tenant_id: org.tenant.id, email: "member@exporg.test", full_name: "Member", role: "member", profile_id: null, password_hash: hash, created_at: t.ctx.now(),
    });
    const memberToken = (await login(t, "member@exporg.test", "member password", { "x-tenant": "exporg" })).body.access_token as string;
    const denied = await t.json("POST", "/api/v1/crm/accounts/import?dry_run=true", { token: memberToken, raw: "name\nA\n", headers: { "content-type": "text/csv" } });
    expect(denied.status).toBe(403);
    // Members export: they read every row in the lists anyway.
    const asMember = await t.request("GET", "/api/v1/crm/accounts/export", { token: memberToken });
    expect(asMember.status).toBe(200);
    const json = await t.json("POST", "/api/v1/crm/accounts/import", { token: org.token, body: { name: "x" } });
    expect(json.status).toBe(415);
    // Rows of a valid file (a header of 50 MB is refused sooner, as a 422: see the hostile header test).
    const line = new Uint8Array(1024).fill(0x41);
    line[1023] = 0x0a;
    const big = new Uint8Array(MAX_IMPORT_BYTES + 1).fill(0x41);
    for (let at = 0; at + 1024 <= big.length; at += 1024) big.set(line, at);
    big.set(new TextEncoder().encode("name\n"), 0);
    const tooBig = await upload(org, "accounts", big);
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.code).toBe("payload_too_large");
    // A body that announces no length is counted as it streams, and refused past 50 MB.
    let sent = 0;
    const piece = big.subarray(0, 1024 * 1024);
    const rows = big.subarray(1024, 1024 * 1024 + 1024);
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent > MAX_IMPORT_BYTES + piece.length) return c.close();
        c.enqueue(sent === 0 ? piece : rows);
        sent += piece.length;
      },
    });
    const chunked = await t.app.handle(
      new Request("http://localhost/api/v1/crm/accounts/import", { method: "POST", headers: { authorization: `Bearer ${org.token}`, "content-type": "text/csv" }, body: stream }),
    );
    expect(chunked.status).toBe(413);
    expect(((await chunked.json()) as { detail: string }).detail).toBe("A CSV import is at most 50 MB.");
    // Over 1 MiB but under 50 MB is read.
    const many = `name\n${Array.from({ length: 60_000 }, (_, i) => `Company number ${i} with a long enough name`).join("\n")}\n`;
    expect(many.length).toBeGreaterThan(1024 * 1024);
    const ok = await upload(other, "accounts", many, "dry_run=true");
    expect(ok.status).toBe(200);
    expect(ok.body.valid_rows).toBe(60_000);
    // At most 100,000 rows: one more and the file is refused as a whole, before any row is checked.
    const tooMany = await upload(other, "accounts", `name\n${"A\n".repeat(100_001)}`, "dry_run=true");
    expect(tooMany.body).toMatchObject({ rows: 100_001, valid_rows: 0, error_count: 1, errors: [{ line: 100_002, column: null }], created: { accounts: 0 } });
    const latin1 = await upload(org, "accounts", new Uint8Array([0x6e, 0x61, 0x6d, 0x65, 0x0a, 0xe9, 0x0a]));
    expect(latin1.status).toBe(422);
  });
});

describe("CSRF for cookie uploads", () => {
  const cookieUpload = (path: string, contentType: string, origin: string | null, site = "same-origin") =>
    t.json("POST", path, {
      raw: "name\nCookie Co\n",
      cookies: { svc_session: org.token },
      headers: { "content-type": contentType, ...(origin ? { origin } : {}), "sec-fetch-site": site },
      tenant: "exporg",
    });
  test("text/csv with our own Origin is accepted on the import routes only", async () => {
    const ok = await cookieUpload("/api/v1/crm/accounts/import?dry_run=true", "text/csv; charset=utf-8", "http://exporg.localhost");
    expect(ok.status).toBe(200);
    expect(ok.body.valid_rows).toBe(1);
    // What a cross-site form can send (text/plain), a foreign Origin, none, or cross-site: refused.
    for (const [type, origin, site] of [
      ["text/plain", "http://exporg.localhost", "same-origin"],
      ["text/csv", "http://evil.test", "cross-site"],
      ["text/csv", "http://imporg.localhost", "same-site"],
      ["text/csv", null, "same-origin"],
    ] as const) {
      const r = await cookieUpload("/api/v1/crm/accounts/import?dry_run=true", type, origin, site);
      expect({ type, origin, status: r.status, code: r.body.code }).toEqual({ type, origin, status: 403, code: "csrf_failed" });
    }
    // text/csv is no key to other writes.
    const elsewhere = await cookieUpload("/api/v1/crm/accounts", "text/csv", "http://exporg.localhost");
    expect(elsewhere.body.code).toBe("csrf_failed");
  });
});
