/** Contract of the CSV transfer store (keyset export chunks, import batches with their undo log) on every backend. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { toIso } from "../../src/kernel/ids";
import { csvLine } from "../../src/kernel/csv";
import { formatCents } from "../../src/crm/money";
import { type SortDir, type SortField, searchTextOf } from "../../src/crm/model";
import type { DealCursor, ExportFilter, ImportDeal } from "../../src/crm/export-import/repo";
import type { JobRow } from "../../src/crm/export-import/jobs-repo";
import type { ImportItem } from "../../src/crm/export-import/import-rows";
import { CRM_BACKENDS, type CrmBackend, dealFields } from "./crm-support";

const SORTS: SortField[] = ["title", "value", "stage", "probability", "close_date", "created_at", "updated_at", "account_name", "contact_name", "assignee_name"];
const decoder = new TextDecoder();

for (const backend of CRM_BACKENDS) {
  describe(`CSV transfer (${backend.name})`, () => {
    let b: CrmBackend;
    beforeAll(async () => {
      b = await backend.fresh();
      await b.addTenant("t1");
      await b.addTenant("t2");
      await b.addUser("t1", "u1", "ann@x.test", "Ann");
      await b.addUser("t1", "u2", "zed@x.test", "Zed");
      for (const [id, name, at] of [["a1", "Acme", 1], ["a2", "=Evil, \"Co\"", 2], ["a3", "Beta", 3]] as const) {
        await b.crm.insertAccount({ id, tenant_id: "t1", name, domain: id === "a3" ? "beta.test" : null, industry: null, created_at: at, updated_at: at });
      }
      await b.crm.insertAccount({ id: "a9", tenant_id: "t2", name: "Other", domain: null, industry: null, created_at: 1, updated_at: 1 });
      await b.crm.insertContact({ id: "c1", tenant_id: "t1", first_name: "Carla", last_name: "Diaz", email: null, phone: null, account_id: "a1", created_at: 5, updated_at: 5 });
      await b.crm.insertContact({ id: "c2", tenant_id: "t1", first_name: "Bo", last_name: null, email: "bo@x.test", phone: "+1 2", account_id: null, created_at: 6, updated_at: 6 });
      // Deals with ties and nulls in every nullable order; created_at ties broken by id.
      const rows = [
        ["d01", "Zeta", "a1", "c1", "u1", "new", 500, "2026-03-01", 10, "line1\nline2"],
        ["d02", "alpha", "a2", null, null, "won", 100, null, null, null],
        ["d03", "Mid, \"q\"", "a3", "c2", "u2", "new", 100, "2026-01-01", 10, "-1"],
        ["d04", "alpha", "a1", null, "u1", "lost", 0, "2026-03-01", null, null],
        ["d05", " padded ", "a3", "c1", null, "qualified", 99999, null, 90, "=SUM(A1)"],
        ["d06", "Ünïcode", "a2", "c2", "u2", "won", 7, "2025-12-31", 50, null],
        ["d07", "last", "a1", null, null, "new", 250, null, null, null],
      ] as const;
      for (const [i, [id, title, account_id, contact_id, assigned_to, stage, value_cents, close_date, probability, notes]] of rows.entries()) {
        const f = dealFields({ title, account_id, contact_id, assigned_to, stage, value_cents, close_date, probability, notes, custom_data: i === 0 ? '{"a":"b,c"}' : null });
        expect(await b.crm.deals.insert("t1", id, f, 1_700_000_000_000 + (i % 3) * 1000)).toEqual({ ok: true });
      }
      await b.crm.deals.insert("t2", "d99", dealFields({ title: "elsewhere", account_id: "a9" }), 1);
    });
    afterAll(() => b.close());

    const walk = async (f: ExportFilter, limit: number) => {
      let after: DealCursor | null = null;
      let out = "";
      for (let i = 0; i < 100; i++) {
        const { csv, next } = await b.transfer.dealsCsvAfter("t1", f, after, limit);
        if (csv !== null) out += decoder.decode(csv);
        if (next === null) return out;
        after = next;
      }
      throw new Error("export did not end");
    };
    const filter = (sortBy: SortField, sortDir: SortDir, o: Partial<ExportFilter> = {}): ExportFilter => ({ stages: null, assignee: null, search: null, sortBy, sortDir, ...o });
    const ids = (csv: string) => csv.split("\r\n").filter((l) => /^d\d\d,/.test(l)).map((l) => l.slice(0, 3));

    test("a deal's line holds the cells csvCell writes", async () => {
      const csv = await walk(filter("created_at", "asc"), 1000);
      const d = (await b.crm.deals.byId("t1", "d01"))!;
      const line = csvLine([d.id, d.title, formatCents(d.value_cents), d.currency, d.stage, "New", d.probability, d.close_date, d.account_name, d.contact_name,
        d.assignee_name, d.assignee_email, d.notes, d.custom_data, toIso(d.created_at), toIso(d.updated_at), null]);
      expect(csv.startsWith(line)).toBe(true);
      expect(csv).toContain(`d02,alpha,1.00,USD,won,Won,,,"'=Evil, ""Co""",,,,,,`);
      expect(csv).toContain(`d05," padded ",999.99,USD,qualified,Qualified,90,,Beta,Carla Diaz,,,'=SUM(A1),,`);
      expect(ids(csv).length).toBe(7);
    });

    test("every order, both ways, walked in chunks of 2, gives the one-chunk file in the expected order", async () => {
      const deals = await Promise.all(["d01", "d02", "d03", "d04", "d05", "d06", "d07"].map(async (id) => (await b.rows<Record<string, unknown>>(
        "SELECT id, title_key, value_cents, stage, probability, close_date, created_at, updated_at, account_key, contact_key, assignee_key FROM deals WHERE tenant_id = $1 AND id = $2", ["t1", id]))[0]!));
      const col: Record<SortField, string> = { title: "title_key", value: "value_cents", stage: "stage", probability: "probability", close_date: "close_date",
        created_at: "created_at", updated_at: "updated_at", account_name: "account_key", contact_name: "contact_key", assignee_name: "assignee_key" };
      for (const sortBy of SORTS) {
        for (const sortDir of ["asc", "desc"] as const) {
          const k = col[sortBy];
          const sign = sortDir === "asc" ? 1 : -1;
          const expected = [...deals].sort((x, y) => {
            const a = x[k] as string | number | null;
            const c = y[k] as string | number | null;
            if (a === null || c === null) return a === c ? sign * ((x.id as string) < (y.id as string) ? -1 : 1) : a === null ? 1 : -1;
            if (a !== c) return sign * (a < c ? -1 : 1);
            return sign * ((x.id as string) < (y.id as string) ? -1 : 1);
          }).map((d) => d.id);
          const whole = await walk(filter(sortBy, sortDir), 1000);
          expect({ sortBy, sortDir, ids: ids(whole) }).toEqual({ sortBy, sortDir, ids: expected as string[] });
          for (const limit of [1, 2, 3]) expect(await walk(filter(sortBy, sortDir), limit)).toBe(whole);
        }
      }
    });

    test("filters: stages, an assignee, unassigned, a search; none reaches another tenant", async () => {
      expect(ids(await walk(filter("created_at", "asc", { stages: ["won", "lost"] }), 2))).toEqual(["d04", "d02", "d06"]);
      expect(ids(await walk(filter("title", "asc", { assignee: "u1" }), 1))).toEqual(["d04", "d01"]);
      expect(ids(await walk(filter("probability", "desc", { assignee: "" }), 1))).toEqual(["d05", "d07", "d02"]);
      expect(ids(await walk(filter("created_at", "asc", { search: "beta" }), 2))).toEqual(["d05", "d03"]);
      expect(ids(await walk(filter("created_at", "asc", { stages: [] }), 2))).toEqual([]);
      expect(await walk(filter("created_at", "asc", { search: "elsewhere" }), 2)).toBe("");
    });

    test("a chunk walks at most `limit` deals of the order, matching or not: a rare filter answers empty chunks with where to go on", async () => {
      // created_at asc: d01, d04, d07 (same time, by id), d02, d05, d03, d06. Only d04 is lost.
      const lost = filter("created_at", "asc", { stages: ["lost"] });
      const first = await b.transfer.dealsCsvAfter("t1", lost, null, 1);
      expect(first.csv).toBeNull();
      expect(first.next).toMatchObject({ id: "d01", inNulls: false });
      const second = await b.transfer.dealsCsvAfter("t1", lost, first.next, 1);
      expect(ids(decoder.decode(second.csv!))).toEqual(["d04"]);
      expect(second.next).toMatchObject({ id: "d04" });
      // A nullable order: the walk of keys ends, and the nulls are walked on in the same chunk.
      const won = filter("close_date", "asc", { stages: ["won"] });
      expect(ids(await walk(won, 1))).toEqual(["d06", "d02"]);
      // close_date asc: d06, d03, d01, d04, then the nulls d02, d05, d07. After d01: d04, then d02.
      const across = await b.transfer.dealsCsvAfter("t1", won, { key: "2026-03-01", id: "d01", inNulls: false }, 2);
      expect(ids(decoder.decode(across.csv!))).toEqual(["d02"]);
      expect(across.next).toEqual({ key: null, id: "d02", inNulls: true });
      expect(ids(await walk(filter("created_at", "asc", { search: "nothing matches this" }), 2))).toEqual([]);
    });

    test("accounts and contacts, newest first, after a row, with the list's search, a bounded walk a step", async () => {
      const first = await b.transfer.accountsAfter("t1", null, null, 2);
      expect(first.rows.map((a) => a.id)).toEqual(["a3", "a2"]);
      expect(first.next).toEqual({ created_at: 2, id: "a2" });
      expect(await b.transfer.accountsAfter("t1", null, first.next, 2)).toEqual({ rows: [expect.objectContaining({ id: "a1", name: "Acme" })], next: null });
      expect((await b.transfer.accountsAfter("t1", "%beta%", null, 10)).rows.map((a) => a.id)).toEqual(["a3"]);
      // The walk is bounded, not the matches: "acme" is the oldest account, so a step of one matches nothing and says where to go on.
      const none = await b.transfer.accountsAfter("t1", "%acme%", null, 1);
      expect(none).toEqual({ rows: [], next: { created_at: 3, id: "a3" } });
      expect(await b.transfer.accountsAfter("t1", "%acme%", none.next, 1)).toEqual({ rows: [], next: { created_at: 2, id: "a2" } });
      const found = await b.transfer.accountsAfter("t1", "%acme%", { created_at: 2, id: "a2" }, 1);
      expect(found.rows.map((a) => a.id)).toEqual(["a1"]);
      expect(found.next).toEqual({ created_at: 1, id: "a1" });
      expect(await b.transfer.accountsAfter("t1", "%acme%", found.next, 1)).toEqual({ rows: [], next: null });
      expect(await b.transfer.accountsAfter("t2", "%acme%", null, 10)).toEqual({ rows: [], next: null });
      const contacts = await b.transfer.contactsAfter("t1", null, null, 1);
      expect(contacts.rows).toEqual([{ id: "c2", tenant_id: "t1", first_name: "Bo", last_name: null, email: "bo@x.test", phone: "+1 2", account_id: null, created_at: 6, updated_at: 6, external_id: null, account_name: null }]);
      expect(contacts.next).toEqual({ created_at: 6, id: "c2" });
      expect((await b.transfer.contactsAfter("t1", null, contacts.next, 5))).toEqual({ rows: [expect.objectContaining({ id: "c1", account_name: "Acme" })], next: null });
      expect((await b.transfer.contactsAfter("t1", "%carla%", null, 5)).rows.map((c) => c.id)).toEqual(["c1"]);
      expect(await b.transfer.contactsAfter("t1", "%carla%", null, 1)).toEqual({ rows: [], next: { created_at: 6, id: "c2" } });
    });

    test("names: the tenant's accounts and contacts oldest first, a bounded step at a time; its members", async () => {
      const first = await b.transfer.accountNamesAfter("t1", null, 2);
      expect(first).toEqual({ rows: [{ id: "a1", name: "Acme", created_at: 1 }, { id: "a2", name: "=Evil, \"Co\"", created_at: 2 }], next: { created_at: 2, id: "a2" } });
      expect(await b.transfer.accountNamesAfter("t1", first.next, 2)).toEqual({ rows: [{ id: "a3", name: "Beta", created_at: 3 }], next: null });
      expect(await b.transfer.accountNamesAfter("t2", null, 5)).toEqual({ rows: [{ id: "a9", name: "Other", created_at: 1 }], next: null });
      const contacts = await b.transfer.contactNamesAfter("t1", null, 1);
      expect(contacts).toEqual({ rows: [{ id: "c1", first_name: "Carla", last_name: "Diaz", account_id: "a1", created_at: 5 }], next: { created_at: 5, id: "c1" } });
      expect(await b.transfer.contactNamesAfter("t1", contacts.next, 1)).toEqual({ rows: [{ id: "c2", first_name: "Bo", last_name: null, account_id: null, created_at: 6 }], next: { created_at: 6, id: "c2" } });
      expect(await b.transfer.contactNamesAfter("t1", { created_at: 6, id: "c2" }, 1)).toEqual({ rows: [], next: null });
      expect([...(await b.transfer.members("t1"))].sort((x, y) => (x.id < y.id ? -1 : 1))).toEqual([{ id: "u1", email: "ann@x.test", full_name: "Ann" }, { id: "u2", email: "zed@x.test", full_name: "Zed" }]);
    });

    const importDeal = (id: string, o: Partial<ImportDeal> = {}): ImportDeal => ({
      ...dealFields({ account_id: "n1", title: `Imported ${id}` }), id, account_name: "New Co", contact_name: "Nina", assignee_name: "Ann", assignee_email: "ann@x.test",
      contact_id: "nc1", assigned_to: "u1", ...o,
    });
    const audit = { tenantId: "t1", userId: null, action: "crm.import", ip: null, userAgent: null, detail: { deals: 2 } };
    const job = (id: string): JobRow => ({
      tenant_id: "t1", id, kind: "deals", status: "running", user_id: null, total: 2, done: 0, added: 0, updated: 0, unchanged: 0, error_count: 0,
      errors: "[]", message: null, created_at: 9_000, finished_at: null, lease_until: 99_000,
    });
    const item = (entity: ImportItem["entity"], row: unknown, o: Partial<ImportItem> = {}): ImportItem =>
      ({ entity, row, line: 2, fromFile: entity === "deal", matchId: null, externalId: null, ...o }) as ImportItem;
    const dealColumns = new Set(["title", "account_name", "contact_name", "assignee_email", "notes", "value", "stage"]);
    const newAccount = (id: string, name: string) => ({ id, tenant_id: "t1", name, domain: null, industry: null, created_at: 0, updated_at: 0 });

    test("an import batch writes every row, numbers deals after the tenant's last, logs its undo entries and progress; the job ends with its audit row", async () => {
      const before = await b.rows<{ m: number }>("SELECT max(seq) AS m FROM deals WHERE tenant_id = $1", ["t1"]);
      expect(await b.jobs.create(job("j1"))).toBe(true);
      // One running job per organization.
      expect(await b.jobs.create(job("j1b"))).toBe(false);
      const outcome = await b.jobs.applyBatch("t1", "j1", 9_000, 99_000, [
        item("account", newAccount("n1", "New Co")),
        item("contact", { id: "nc1", tenant_id: "t1", first_name: "Nina", last_name: null, email: null, phone: null, account_id: "n1", created_at: 0, updated_at: 0 }),
        item("deal", importDeal("i1"), { externalId: "ext-1" }),
        item("deal", importDeal("i2", { contact_id: null, contact_name: null, notes: "Hello" })),
      ], dealColumns, 2);
      expect(outcome).toEqual({ added: 2, updated: 0, unchanged: 0 });
      // Each deal it added has its timeline entry, written in the batch's transaction.
      const added = await b.crm.activities.timeline("t1", "i1", 10, 0);
      expect(added.total).toBe(1);
      expect(added.rows[0]).toMatchObject({ type: "imported", actor_id: null, created_at: 9_000 });
      expect(JSON.parse(added.rows[0]!.data)).toEqual({ job_id: "j1", action: "added" });
      expect(await b.crm.account("t1", "n1")).toMatchObject({ name: "New Co", created_at: 9_000, updated_at: 9_000 });
      expect(await b.crm.contact("t1", "nc1")).toMatchObject({ account_id: "n1", created_at: 9_000 });
      const [i1, i2] = [(await b.crm.deals.byId("t1", "i1"))!, (await b.crm.deals.byId("t1", "i2"))!];
      expect(i1).toMatchObject({ account_name: "New Co", contact_name: "Nina", assignee_name: "Ann", created_at: 9_000, stage_name: "New" });
      expect([i1.seq, i2.seq]).toEqual([before[0]!.m + 1, before[0]!.m + 2]);
      const [k] = await b.rows("SELECT title_key, account_key, contact_key, assignee_key, search_text, external_id FROM deals WHERE tenant_id = $1 AND id = $2", ["t1", "i2"]);
      expect(k).toEqual({ title_key: "imported i2", account_key: "new co", contact_key: null, assignee_key: "ann", search_text: "imported i2\nhello\nnew co\n", external_id: null });
      expect((await b.rows("SELECT external_id FROM deals WHERE tenant_id = $1 AND id = $2", ["t1", "i1"]))[0]).toEqual({ external_id: "ext-1" });
      expect(await b.jobs.get("t1", "j1")).toMatchObject({ done: 2, added: 2, status: "running" });
      expect((await b.rows<{ n: number }>("SELECT count(*) AS n FROM crm_job_undo WHERE tenant_id = $1 AND job_id = $2", ["t1", "j1"]))[0]!.n).toBe(4);
      // The same rows again, named by external id and id: nothing changes.
      const again = await b.jobs.applyBatch("t1", "j1", 9_500, 99_000, [
        item("deal", { ...importDeal("i1"), id: "x1" }, { externalId: "ext-1" }),
        item("deal", { ...importDeal("i2", { contact_id: null, contact_name: null, notes: "Hello" }), id: "x2" }, { matchId: "i2" }),
      ], dealColumns, 2);
      expect(again).toEqual({ added: 0, updated: 0, unchanged: 2 });
      await b.jobs.finish("t1", "j1", 9_600, "succeeded", null, "[]", 0, audit);
      expect(await b.rows("SELECT action, detail FROM audit_log WHERE tenant_id = $1", ["t1"])).toEqual([{ action: "crm.import", detail: '{"deals":2}' }]);
      while ((await b.jobs.dropUndo("t1", "j1", 3)) > 0);
      expect((await b.rows<{ n: number }>("SELECT count(*) AS n FROM crm_job_undo WHERE tenant_id = $1", ["t1"]))[0]!.n).toBe(0);
      // The next single deal continues the numbering.
      await b.crm.deals.insert("t1", "after", dealFields({ account_id: "a1" }), 9_001);
      expect((await b.crm.deals.byId("t1", "after"))!.seq).toBe(i2.seq + 1);
    });

    test("a failed job is undone newest first: added records go, updated ones get their columns back, the counters follow", async () => {
      const count = async () => (await b.rows<{ n: number }>("SELECT (SELECT count(*) FROM deals) + (SELECT count(*) FROM accounts) AS n"))[0]!.n;
      const counters = async () => b.rows("SELECT assignee, stage, n FROM deal_counts WHERE tenant_id = $1 AND n <> 0 ORDER BY assignee, stage", ["t1"]);
      const grams = async () => (await b.rows<{ n: number }>("SELECT sum(n) AS n FROM deal_gram_counts WHERE tenant_id = $1", ["t1"]))[0]!.n;
      const n = await count();
      const [c0, g0] = [await counters(), Number(await grams())];
      const i1 = (await b.crm.deals.byId("t1", "i1"))!;
      expect(await b.jobs.create(job("j2"))).toBe(true);
      const first = await b.jobs.applyBatch("t1", "j2", 9_700, 99_000, [
        item("account", newAccount("z2", "Z")),
        item("deal", importDeal("z-deal", { account_id: "z2", account_name: "Z", contact_id: null, contact_name: null, assigned_to: null, assignee_name: null, assignee_email: null })),
        item("deal", importDeal("y1", { title: "Renamed by import", stage: "won" }), { matchId: "i1" }),
      ], dealColumns, 2);
      expect(first).toEqual({ added: 1, updated: 1, unchanged: 0 });
      expect((await b.crm.deals.byId("t1", "i1"))!).toMatchObject({ title: "Renamed by import", stage: "won", stage_changed_at: 9_700 });
      const changed = (await b.crm.activities.timeline("t1", "i1", 10, 0)).rows[0]!;
      expect(changed.type).toBe("imported");
      const data = JSON.parse(changed.data);
      expect(data).toMatchObject({ job_id: "j2", action: "updated", from: i1.stage, to: "won" });
      expect(data.changes).toContainEqual({ field: "title", before: i1.title, after: "Renamed by import" });
      expect(await counters()).not.toEqual(c0);
      // A later batch fails (an external id another record holds): nothing of it is written.
      await b.exec("UPDATE deals SET external_id = 'taken' WHERE tenant_id = $1 AND id = $2", ["t1", "i2"]);
      await expect(b.jobs.applyBatch("t1", "j2", 9_800, 99_000, [item("deal", importDeal("w1"), { externalId: "taken", matchId: "z-deal" })], dealColumns, 1)).rejects.toThrow();
      while ((await b.jobs.undoStep("t1", "j2", 1)) > 0);
      await b.jobs.finish("t1", "j2", 9_900, "failed", "why", "[]", 0, null);
      expect(await count()).toBe(n);
      expect(await b.crm.account("t1", "z2")).toBeNull();
      expect((await b.crm.deals.byId("t1", "i1"))!).toMatchObject({ title: i1.title, stage: i1.stage });
      expect(await counters()).toEqual(c0);
      expect(Number(await grams())).toBe(g0);
      expect(await b.jobs.get("t1", "j2")).toMatchObject({ status: "failed", message: "why", done: 2 });
      expect((await b.jobs.list("t1", 0, 10)).rows.map((j) => j.id)).toEqual(["j2", "j1"]);
      expect((await b.jobs.list("t2", 0, 10)).total).toBe(0);
    });

    test("new deals of one batch that collide on a unique key fail the batch naming the row's line, and leave nothing written", async () => {
      expect(await b.jobs.create(job("j5"))).toBe(true);
      const n = (await b.rows<{ n: number }>("SELECT count(*) AS n FROM deals WHERE tenant_id = $1", ["t1"]))[0]!.n;
      const twin = (id: string, line: number) => item("deal", importDeal(id), { fromFile: false, line, externalId: "twin" });
      const failed = b.jobs.applyBatch("t1", "j5", 9_960, 99_000, [twin("tw1", 7), twin("tw2", 8)], dealColumns, 2);
      // SQLite names the row (its batch tries the rows one by one once the batch's statement failed); PostgreSQL the batch's first line.
      await expect(failed).rejects.toMatchObject({ line: backend.name === "sqlite" ? 8 : 7, column: "external_id" });
      expect((await b.rows<{ n: number }>("SELECT count(*) AS n FROM deals WHERE tenant_id = $1", ["t1"]))[0]!.n).toBe(n);
      expect((await b.rows<{ n: number }>("SELECT count(*) AS n FROM crm_job_undo WHERE tenant_id = $1 AND job_id = $2", ["t1", "j5"]))[0]!.n).toBe(0);
      await b.jobs.finish("t1", "j5", 9_970, "failed", "why", "[]", 0, null);
    });

    test("a job's undo keeps the notes written since found: the deal's text is its fields as they were and its notes as they are", async () => {
      const i2 = (await b.crm.deals.byId("t1", "i2"))!;
      const text = async () =>
        (await b.rows<{ title: string; note_text: string; search_text: string }>("SELECT title, note_text, search_text FROM deals WHERE tenant_id = $1 AND id = $2", ["t1", "i2"]))[0]!;
      expect(await b.jobs.create(job("j3"))).toBe(true);
      const titleOnly = new Set(["title"]);
      expect(await b.jobs.applyBatch("t1", "j3", 9_950, 99_000, [item("deal", importDeal("y2", { title: "Imported over" }), { matchId: "i2" })], titleOnly, 1))
        .toEqual({ added: 0, updated: 1, unchanged: 0 });
      expect(await b.crm.activities.insertNote({ tenant_id: "t1", id: "n-undo", deal_id: "i2", author_id: "u1", body: "Dingo UNDO", created_at: 9_960, updated_at: 9_960 })).toBe(true);
      expect((await text()).search_text).toBe(searchTextOf("Imported over", i2.notes, i2.account_name, i2.contact_name, "Dingo UNDO"));
      while ((await b.jobs.undoStep("t1", "j3", 1)) > 0);
      await b.jobs.finish("t1", "j3", 9_990, "failed", "why", "[]", 0, null);
      expect(await text()).toEqual({ title: i2.title, note_text: "Dingo UNDO", search_text: searchTextOf(i2.title, i2.notes, i2.account_name, i2.contact_name, "Dingo UNDO") });
      // The same file again finds the deal as it is: its notes' text read with it, nothing to write.
      expect(await b.jobs.create(job("j4"))).toBe(true);
      expect(await b.jobs.applyBatch("t1", "j4", 9_995, 99_000, [item("deal", importDeal("y3", { title: i2.title }), { matchId: "i2" })], titleOnly, 1))
        .toEqual({ added: 0, updated: 0, unchanged: 1 });
      await b.jobs.finish("t1", "j4", 9_999, "succeeded", null, "[]", 0, null);
    });
  });
}
