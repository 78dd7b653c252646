/**
 * The CRM's writes racing each other, on two connection pools (PostgreSQL runs the transactions
 * at once; SQLite, with one writer, must give the same outcome). Each test starts many pairs of
 * conflicting calls together and then checks that nothing is lost, doubled or left stale.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { contactName, searchTextOf, sortKey } from "../../src/crm/model";
import { CRM_BACKENDS, type CrmBackend, dealFields, type Stores } from "./crm-support";

const ROUNDS = 12;

for (const backend of CRM_BACKENDS) {
  describe(`CRM races (${backend.name})`, () => {
    let b: CrmBackend;
    let other: Stores;
    beforeAll(async () => {
      b = await backend.fresh();
      other = await b.second();
    });
    afterAll(() => b.close());

    /** Every deal's copies, recomputed from the rows it references, as a deal write would. */
    async function expectCopiesCurrent(tenantId: string) {
      const deals = await b.rows<Record<string, string | null>>(
        `SELECT d.id, d.title, d.notes, d.account_name, d.account_key, d.contact_name, d.contact_key, d.assignee_name, d.assignee_key, d.assignee_email,
                d.search_text, a.name AS a_name, c.first_name, c.last_name, u.full_name, u.email
           FROM deals d JOIN accounts a ON a.tenant_id = d.tenant_id AND a.id = d.account_id
           LEFT JOIN contacts c ON c.tenant_id = d.tenant_id AND c.id = d.contact_id
           LEFT JOIN users u ON u.tenant_id = d.tenant_id AND u.id = d.assigned_to
          WHERE d.tenant_id = $1 ORDER BY d.id`,
        [tenantId],
      );
      expect(deals.length).toBeGreaterThan(0);
      for (const d of deals) {
        const contact = d.first_name === null ? null : contactName(d.first_name!, d.last_name);
        const want = {
          id: d.id, account_name: d.a_name, account_key: sortKey(d.a_name!), contact_name: contact, contact_key: contact === null ? null : sortKey(contact),
          assignee_name: d.full_name, assignee_key: d.full_name === null ? null : sortKey(d.full_name!), assignee_email: d.email,
          search_text: searchTextOf(d.title!, d.notes, d.a_name!, contact, ""),
        };
        const got = Object.fromEntries(Object.keys(want).map((k) => [k, d[k]]));
        expect(got).toEqual(want);
      }
    }

    test("deals created at once in one tenant get distinct, gap-free numbers, also for its very first deals", async () => {
      await b.addTenant("seq1");
      await b.addTenant("seq2");
      for (const t of ["seq1", "seq2"]) await b.crm.insertAccount({ id: `${t}-a`, tenant_id: t, name: "A", domain: null, industry: null, created_at: 1, updated_at: 1 });
      const writes = [];
      for (let i = 0; i < 40; i++) {
        const t = i % 4 < 2 ? "seq1" : "seq2";
        writes.push((i % 2 ? other : b).crm.deals.insert(t, `${t}-d${i}`, dealFields({ account_id: `${t}-a`, title: `d${i}` }), i));
      }
      expect(await Promise.all(writes)).toEqual(Array(40).fill({ ok: true }));
      const bases = new Set<number>();
      for (const t of ["seq1", "seq2"]) {
        const seqs = (await b.rows<{ seq: number }>("SELECT seq FROM deals WHERE tenant_id = $1 ORDER BY seq", [t])).map((r) => r.seq);
        const base = Math.floor(seqs[0]! / 2 ** 32);
        bases.add(base);
        expect(seqs).toEqual(Array.from({ length: 20 }, (_, i) => base * 2 ** 32 + i));
        expect(await b.rows("SELECT next_deal FROM crm_tenants WHERE tenant_id = $1", [t])).toEqual([{ next_deal: 20 }]);
      }
      expect(bases.size).toBe(2);
    });

    test("account and contact renames racing deal updates leave every copy current", async () => {
      await b.addTenant("ren");
      for (const id of ["a1", "a2"]) await b.crm.insertAccount({ id, tenant_id: "ren", name: `Acc ${id}`, domain: null, industry: null, created_at: 1, updated_at: 1 });
      for (const id of ["c1", "c2"]) await b.crm.insertContact({ id, tenant_id: "ren", first_name: `First ${id}`, last_name: null, email: null, phone: null, account_id: null, created_at: 1, updated_at: 1 });
      const ids = Array.from({ length: 8 }, (_, i) => `d${i}`);
      for (const id of ids) await b.crm.deals.insert("ren", id, dealFields({ account_id: "a1", contact_id: "c1", title: id }), 1);
      for (let r = 0; r < ROUNDS; r++) {
        const acc = r % 2 ? "a1" : "a2";
        const con = r % 2 ? "c2" : "c1";
        await Promise.all([
          b.crm.updateAccount({ id: "a1", tenant_id: "ren", name: `Acc one ${r}`, domain: null, industry: null, created_at: 1, updated_at: r }, true),
          other.crm.updateContact({ id: "c1", tenant_id: "ren", first_name: `First ${r}`, last_name: `Last ${r}`, email: null, phone: null, account_id: null, created_at: 1, updated_at: r }, true),
          ...ids.map((id, i) =>
            (i % 2 ? other : b).crm.deals.update("ren", id, (cur) => ({ ...cur, account_id: i % 3 ? acc : "a1", contact_id: i % 3 ? con : "c1", notes: `r${r}` }), r),
          ),
          b.crm.deals.insert("ren", `new${r}`, dealFields({ account_id: "a1", contact_id: "c1", title: `new ${r}` }), r),
        ]);
      }
      await expectCopiesCurrent("ren");
    });

    test("a member's rename racing deals being assigned to and from them leaves every copy current", async () => {
      await b.addTenant("usr");
      await b.addUser("usr", "usr-u1", "u1@x.test", "Una");
      await b.addUser("usr", "usr-u2", "u2@x.test", "Ugo");
      await b.crm.insertAccount({ id: "usr-a", tenant_id: "usr", name: "A", domain: null, industry: null, created_at: 1, updated_at: 1 });
      const ids = Array.from({ length: 8 }, (_, i) => `usr-d${i}`);
      for (const id of ids) await b.crm.deals.insert("usr", id, dealFields({ account_id: "usr-a", assigned_to: "usr-u1" }), 1);
      for (let r = 0; r < ROUNDS; r++) {
        await Promise.all([
          b.renameUser("usr", "usr-u1", `Una ${r}`, `u1.${r}@x.test`),
          ...ids.map((id, i) => (i % 2 ? other : b).crm.deals.update("usr", id, (cur) => ({ ...cur, assigned_to: (r + i) % 3 ? "usr-u1" : "usr-u2", title: `t${r}` }), r)),
          other.crm.deals.insert("usr", `usr-new${r}`, dealFields({ account_id: "usr-a", assigned_to: "usr-u1" }), r),
        ]);
      }
      await expectCopiesCurrent("usr");
    });

    test("two stage deletions at once never remove the last stage", async () => {
      await b.addTenant("del");
      const stages = await b.crm.stages("del");
      for (const s of stages.slice(2)) await b.stages.remove(s, null, () => ({ tenantId: "del", userId: null, action: "x", ip: null, userAgent: null }), 1);
      const [x, y] = stages;
      const audit = () => ({ tenantId: "del", userId: null, action: "crm.stage_delete", ip: null, userAgent: null });
      const results = await Promise.all([b.stages.remove(x!, null, audit, 2), other.stages.remove(y!, null, audit, 2)]);
      expect([...results].sort()).toEqual([0, "last"]);
      expect((await b.crm.stages("del")).length).toBe(1);
      expect(await b.rows("SELECT count(*) AS n FROM audit_log WHERE tenant_id = $1 AND action = $2", ["del", "crm.stage_delete"])).toEqual([{ n: 1 }]);
    });

    test("a stage deletion racing deals created in it and moved into it leaves no deal in a missing stage", async () => {
      await b.addTenant("mv");
      await b.crm.insertAccount({ id: "mv-a", tenant_id: "mv", name: "A", domain: null, industry: null, created_at: 1, updated_at: 1 });
      for (let i = 0; i < 6; i++) await b.crm.deals.insert("mv", `old${i}`, dealFields({ account_id: "mv-a", stage: "new" }), 1);
      const doomed = (await b.crm.stage("mv", "proposal"))!;
      const audit = () => ({ tenantId: "mv", userId: null, action: "crm.stage_delete", ip: null, userAgent: null });
      const [removed, ...writes] = await Promise.all([
        b.stages.remove(doomed, "won", audit, 5),
        ...Array.from({ length: 6 }, (_, i) => other.crm.deals.insert("mv", `in${i}`, dealFields({ account_id: "mv-a", stage: "proposal" }), 2)),
        ...Array.from({ length: 6 }, (_, i) => other.crm.deals.update("mv", `old${i}`, (c) => ({ ...c, stage: "proposal" }), 3)),
      ]);
      expect(typeof removed).toBe("number");
      for (const w of writes) expect([{ ok: true }, { ok: false, missing: "stage" }]).toContainEqual(w);
      expect(await b.rows("SELECT id FROM deals WHERE tenant_id = $1 AND stage = $2", ["mv", "proposal"])).toEqual([]);
      const moved = writes.filter((w) => w.ok).length;
      expect(removed).toBe(moved);
    });

    test("two reorders and a new stage at once: one order wins whole and positions stay distinct", async () => {
      await b.addTenant("ord");
      const ids = (await b.crm.stages("ord")).map((s) => s.id);
      const reversed = [...ids].reverse();
      const rotated = [...ids.slice(1), ids[0]!];
      const audit = { tenantId: "ord", userId: null, action: "crm.stage_reorder", ip: null, userAgent: null };
      const [r1, r2] = await Promise.all([
        b.stages.reorder("ord", reversed, audit, 1),
        other.stages.reorder("ord", rotated, audit, 1),
        other.crm.insertStage({ id: "ord-extra", tenant_id: "ord", key: "extra", name: "Extra", color: "#000000", probability: 1, is_won: 0, is_lost: 0, created_at: 1, position: null }),
      ]);
      const after = await b.crm.stages("ord");
      expect(new Set(after.map((s) => s.position)).size).toBe(after.length);
      const order = after.map((s) => s.id).filter((id) => id !== "ord-extra");
      if (r1 || r2) expect([reversed, rotated]).toContainEqual(order);
      else expect(order).toEqual(ids);
    });

    test("an account deletion racing deals created for it: either the deal or the deletion is refused", async () => {
      await b.addTenant("acc");
      for (let r = 0; r < ROUNDS; r++) {
        await b.crm.insertAccount({ id: `acc-${r}`, tenant_id: "acc", name: "A", domain: null, industry: null, created_at: 1, updated_at: 1 });
        const [deleted, created] = await Promise.all([
          b.crm.deleteAccount("acc", `acc-${r}`),
          other.crm.deals.insert("acc", `acc-d${r}`, dealFields({ account_id: `acc-${r}` }), 1),
        ]);
        expect(deleted ? created : { ok: true }).toEqual(deleted ? { ok: false, missing: "account_id" } : created);
        expect((await b.crm.account("acc", `acc-${r}`)) === null).toBe(deleted);
      }
    });
  });
}
