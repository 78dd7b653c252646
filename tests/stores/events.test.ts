/**
 * Contract of the event log's store on every backend: appends number an organization's events
 * from 1 in commit order (never reusing a number, even once old events are swept), reads by range
 * in both directions, the bounded sweep, and the commit notice a stream waits for (in-process on
 * SQLite, LISTEN/NOTIFY on PostgreSQL); a rolled-back append leaves nothing and notifies nothing new.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeTx } from "../../src/db/database";
import type { EventsStore, NewEvent } from "../../src/events/repo";
import { appendEventsInTx, createPostgresEventsStore } from "../../src/stores/postgres/events";
import { createSqliteEventsStore } from "../../src/stores/sqlite/events";
import { BACKENDS, type Backend } from "./backends";

const ev = (type: string, n: number): NewEvent => ({ type, actor: { type: "user", id: "u1" }, data: { n } });

for (const backend of BACKENDS) {
  describe(`events store (${backend.name})`, () => {
    let b: Backend;
    let store: EventsStore;
    /** Appends in a transaction of its own; `fail` throws after the append, inside the transaction. */
    let append: (tenantId: string, events: NewEvent[], now: number, fail?: boolean) => Promise<void>;
    let exec: (sql: string) => Promise<void>;

    beforeAll(async () => {
      b = await backend.fresh();
      if (b.kind === "sqlite") {
        const db = b.db;
        const s = createSqliteEventsStore(db);
        store = s;
        append = async (t, events, now, fail) =>
          writeTx(db, () => {
            s.appendInTx(t, events, now);
            if (fail) throw new Error("forced");
          });
        exec = async (sql) => void db.run(sql);
      } else {
        const pg = b.pg;
        store = createPostgresEventsStore(pg);
        append = (t, events, now, fail) =>
          pg.begin(async (tx) => {
            await appendEventsInTx(tx, t, events, now);
            if (fail) throw new Error("forced");
          });
        exec = async (sql) => void (await pg.unsafe(sql));
      }
      for (const t of ["t1", "t2", "t3"]) await exec(`INSERT INTO tenants (id, name, subdomain, created_at) VALUES ('${t}', '${t}', '${t}', 1)`);
    });
    afterAll(() => b.close());

    test("numbers each organization's events from 1, in order; reads both ways by range", async () => {
      expect(await store.lastSeq("t1")).toBe(0);
      await append("t1", [ev("a.one", 1)], 1000);
      await append("t1", [ev("a.two", 2), ev("a.three", 3)], 2000);
      await append("t2", [ev("b.one", 1)], 2500);
      expect(await store.lastSeq("t1")).toBe(3);
      expect(await store.lastSeq("t2")).toBe(1);
      const all = await store.since("t1", 0, 10);
      expect(all.map((r) => [r.seq, r.type, r.created_at, r.tenant_id])).toEqual([
        [1, "a.one", 1000, "t1"],
        [2, "a.two", 2000, "t1"],
        [3, "a.three", 2000, "t1"],
      ]);
      expect(all[0]).toMatchObject({ actor_type: "user", actor_id: "u1" });
      expect(JSON.parse(all[1]!.data)).toEqual({ n: 2 });
      expect((await store.since("t1", 1, 1)).map((r) => r.seq)).toEqual([2]);
      expect((await store.page("t1", Number.MAX_SAFE_INTEGER, 0, 2)).map((r) => r.seq)).toEqual([3, 2]);
      expect((await store.page("t1", 3, 1, 10)).map((r) => r.seq)).toEqual([2]);
      expect((await store.since("t2", 0, 10)).map((r) => r.type)).toEqual(["b.one"]);
      // The system as actor: no id.
      await append("t2", [{ type: "b.system", actor: { type: "system", id: null }, data: { quote: "it's \"x\"" } }], 2600);
      const [sys] = await store.since("t2", 1, 10);
      expect(sys).toMatchObject({ seq: 2, type: "b.system", actor_type: "system", actor_id: null });
      expect(JSON.parse(sys!.data)).toEqual({ quote: 'it\'s "x"' });
    });

    test("a rolled-back append leaves no event and uses up no number", async () => {
      await expect(append("t1", [ev("a.never", 9)], 3000, true)).rejects.toThrow("forced");
      expect(await store.lastSeq("t1")).toBe(3);
      await append("t1", [ev("a.four", 4)], 3000);
      expect((await store.since("t1", 3, 10)).map((r) => [r.seq, r.type])).toEqual([[4, "a.four"]]);
    });

    test("watch hears each committed append (the organization and its last number), and stops when asked", async () => {
      const heard: Array<[string, number]> = [];
      const stop = await store.watch((t, seq) => heard.push([t, seq]), () => {});
      await append("t3", [ev("c.one", 1), ev("c.two", 2)], 4000);
      await append("t3", [ev("c.never", 3)], 4000, true).catch(() => {});
      await append("t3", [ev("c.three", 3)], 4000);
      for (let i = 0; i < 200 && heard.at(-1)?.[1] !== 3; i++) await Bun.sleep(10);
      // A rolled-back append may be heard of on SQLite (its notice is a hint: the stream reads the
      // table, where it finds nothing), never on PostgreSQL, whose notices go out at commit.
      expect(heard.map(([, s]) => s)).toContain(2);
      expect(heard.at(-1)).toEqual(["t3", 3]);
      expect(heard.every(([t]) => t === "t3")).toBe(true);
      await stop();
      await append("t3", [ev("c.four", 4)], 4000);
      await Bun.sleep(100);
      expect(heard.at(-1)).toEqual(["t3", 3]);
    });

    test("the sweep deletes events older than the cut, in bounded steps, and numbering goes on", async () => {
      // t1: seq 1 at 1000, 2 and 3 at 2000, 4 at 3000; t2: 1 at 2500.
      let step = await store.sweepStep(2600, "", 10, 2);
      expect(step.deleted).toBe(2);
      let total = step.deleted;
      while (step.next !== null) {
        step = await store.sweepStep(2600, step.next, 10, 2);
        total += step.deleted;
      }
      expect(total).toBe(4);
      expect((await store.since("t1", 0, 10)).map((r) => r.seq)).toEqual([4]);
      expect((await store.since("t2", 0, 10)).map((r) => r.seq)).toEqual([2]);
      await append("t2", [ev("b.two", 2)], 5000);
      expect((await store.since("t2", 0, 10)).map((r) => r.seq)).toEqual([2, 3]);
    });
  });
}
