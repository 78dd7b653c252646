/**
 * Contract of the webhooks store on every backend: an event append writes one delivery per enabled
 * endpoint that asks for its type, in the append's transaction (none when it rolls back); endpoint
 * changes are seen by the next append; leasing hands a due delivery to one sender until its lease
 * runs out; an attempt's end is recorded only by the lease that made it, and one that gives up
 * disables its endpoint and queues the admins' mails in the same transaction.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeTx } from "../../src/db/database";
import type { NewEvent } from "../../src/events/repo";
import { appendEventsInTx } from "../../src/stores/postgres/events";
import { createPostgresStores } from "../../src/stores/postgres";
import { createSqliteStores } from "../../src/stores/sqlite";
import type { DeliveryRow, DisabledNotice, EndpointDisable, EndpointRow, WebhooksStore } from "../../src/webhooks/repo";
import type { MailStore, OutgoingMail } from "../../src/mail/repo";
import { BACKENDS, type Backend } from "./backends";

const ev = (type: string): NewEvent => ({ type, actor: { type: "user", id: "u1" }, data: { name: "x" } });

const endpoint = (tenant: string, id: string, events: string[], enabled = 1): EndpointRow => ({
  tenant_id: tenant, id, url: `https://hooks.example/${id}`, description: null, events: JSON.stringify(events), enabled, disabled_reason: null,
  secret_sealed: "sealed", previous_secret_sealed: null, previous_secret_until: null, created_at: 1, updated_at: 1,
});

for (const backend of BACKENDS) {
  describe(`webhooks store (${backend.name})`, () => {
    let b: Backend;
    let store: WebhooksStore;
    let mail: MailStore;
    let append: (tenantId: string, events: NewEvent[], now: number, fail?: boolean) => Promise<void>;
    let exec: (sql: string) => Promise<void>;

    beforeAll(async () => {
      b = await backend.fresh();
      if (b.kind === "sqlite") {
        const db = b.db;
        const stores = createSqliteStores(db);
        store = stores.webhooks;
        mail = stores.mail;
        append = async (t, events, now, fail) =>
          writeTx(db, () => {
            stores.events.appendInTx(t, events, now);
            if (fail) throw new Error("forced");
          });
        exec = async (sql) => void db.run(sql);
      } else {
        const pg = b.pg;
        const stores = createPostgresStores(pg);
        store = stores.webhooks;
        mail = stores.mail;
        append = (t, events, now, fail) =>
          pg.begin(async (tx) => {
            await appendEventsInTx(tx, t, events, now);
            if (fail) throw new Error("forced");
          });
        exec = async (sql) => void (await pg.unsafe(sql));
      }
      for (const t of ["t1", "t2"]) await exec(`INSERT INTO tenants (id, name, subdomain, created_at) VALUES ('${t}', '${t}', '${t}', 1)`);
    });
    afterAll(() => b.close());

    const ids = async (tenant: string, endpointId: string) => (await store.deliveries(tenant, endpointId, 100, 0)).map((d) => [d.event_type, Number(d.event_seq)]).sort();

    test("an append writes a delivery per enabled endpoint that wants the type; a rolled-back one writes none", async () => {
      await append("t1", [ev("deal.created")], 1000);
      await store.insert(endpoint("t1", "all", ["*"]));
      await store.insert(endpoint("t1", "deals", ["deal.created", "deal.deleted"]));
      await store.insert(endpoint("t1", "off", ["*"], 0));
      await store.insert(endpoint("t2", "other", ["*"]));
      expect(await store.count("t1")).toBe(3);
      await append("t1", [ev("deal.created"), ev("account.created")], 2000);
      await expect(append("t1", [ev("deal.deleted")], 2500, true)).rejects.toThrow("forced");
      expect(await ids("t1", "all")).toEqual([["account.created", 3], ["deal.created", 2]]);
      expect(await ids("t1", "deals")).toEqual([["deal.created", 2]]);
      expect(await ids("t1", "off")).toEqual([]);
      expect(await ids("t2", "other")).toEqual([]);
      expect(await store.deliveryCount("t1", "all")).toBe(2);
      // A change of the endpoint is seen by the next append (the SQLite cache is dropped).
      await store.update("t1", "deals", { url: "https://hooks.example/deals", description: "d", events: JSON.stringify(["account.created"]), enabled: 1, disabled_reason: null, updated_at: 3000 });
      await store.update("t1", "off", { url: "https://hooks.example/off", description: null, events: JSON.stringify(["*"]), enabled: 1, disabled_reason: null, updated_at: 3000 });
      await append("t1", [ev("deal.created"), ev("account.created")], 3000);
      expect(await ids("t1", "deals")).toEqual([["account.created", 5], ["deal.created", 2]]);
      expect(await ids("t1", "off")).toEqual([["account.created", 5], ["deal.created", 4]]);
      await exec("INSERT INTO users (id, tenant_id, email, role, password_hash, created_at, updated_at) VALUES ('a1', 't1', 'boss@t1.test', 'admin', 'x', 1, 1), ('m1', 't1', 'm@t1.test', 'member', 'x', 1, 1)");
      // An end that gives up disables the endpoint and queues a mail per admin in its own transaction: a
      // failing mail undoes all three; a late end of the same attempt is stale; another end finds it disabled.
      const notices: DisabledNotice[] = [];
      const mails = (n: DisabledNotice): OutgoingMail[] => (notices.push(n), n.recipients.map((r) => ({ tenantId: "t1", kind: "webhook_disabled", recipient: r, subject: "s", text: "t", html: "h", link: null })));
      const off = (m: EndpointDisable["mails"]): EndpointDisable => ({ endpointId: "off", reason: "gone", mails: m });
      const gone = { status: 410, durationMs: 3, error: null };
      const [first, second] = await store.deliveries("t1", "off", 10, 0);
      await expect(store.finish("t1", first!.id, 0, { kind: "failed" }, gone, 3500, off(() => { throw new Error("no mail"); }))).rejects.toThrow("no mail");
      expect(await store.delivery("t1", "off", first!.id)).toMatchObject({ status: "pending", last_status: null });
      expect((await store.byId("t1", "off"))).toMatchObject({ enabled: 1, disabled_reason: null });
      expect(await store.finish("t1", first!.id, 0, { kind: "failed" }, gone, 3500, off(mails))).toBe("disabled");
      expect(await store.finish("t1", first!.id, 0, { kind: "failed" }, gone, 3500, off(mails))).toBe("stale");
      expect(await store.finish("t1", second!.id, 0, { kind: "failed" }, gone, 3500, off(mails))).toBe("recorded");
      expect(await store.delivery("t1", "off", first!.id)).toMatchObject({ status: "failed", last_status: 410 });
      expect(notices).toEqual([{ tenantName: "t1", subdomain: "t1", recipients: ["boss@t1.test"] }]);
      expect((await mail.list(10)).filter((m) => m.kind === "webhook_disabled").map((m) => m.recipient)).toEqual(["boss@t1.test"]);
      expect((await store.byId("t1", "off"))).toMatchObject({ enabled: 0, disabled_reason: "gone" });
      await append("t1", [ev("deal.created")], 3600);
      expect(await store.deliveryCount("t1", "off")).toBe(2);
    });

    test("leasing hands a due delivery out once until its lease ends; only that lease records the end", async () => {
      await exec("DELETE FROM webhook_deliveries");
      await append("t2", [ev("deal.created"), ev("deal.updated")], 10_000);
      const seen: DeliveryRow[] = [];
      const first = await store.lease(10_000, 20_000, 10, (d) => (seen.push(d), true));
      expect(first.map((d) => d.event_type).sort()).toEqual(["deal.created", "deal.updated"]);
      expect(first[0]).toMatchObject({ url: "https://hooks.example/other", secret_sealed: "sealed", attempts: 1 });
      expect(JSON.parse(first[0]!.ev_data!)).toEqual({ name: "x" });
      // Leased: not due again before the lease ends.
      expect(await store.lease(15_000, 25_000, 10, () => true)).toEqual([]);
      const [a, c] = first as unknown as [DeliveryRow, DeliveryRow];
      expect(await store.finish("t2", a.id, 1, { kind: "retry", next: 30_000 }, { status: 500, durationMs: 12, error: null }, 16_000)).toBe("recorded");
      // The lease of c ran out: another sender takes it (its attempts move on), and the first sender's late end is refused.
      const again = await store.lease(20_000, 40_000, 10, () => true);
      expect(again.map((d) => [d.id, Number(d.attempts)])).toEqual([[c.id, 2]]);
      expect(await store.finish("t2", c.id, 1, { kind: "delivered" }, { status: 200, durationMs: 5, error: null }, 21_000)).toBe("stale");
      expect(await store.finish("t2", c.id, 2, { kind: "delivered" }, { status: 204, durationMs: 5, error: null }, 21_000)).toBe("recorded");
      const done = await store.delivery("t2", "other", c.id);
      expect(done).toMatchObject({ status: "delivered", last_status: 204, last_duration_ms: 5 });
      expect(await store.backlog()).toEqual({ pending: 1, failing: 1 });
      // `accept` refuses: nothing is leased.
      expect(await store.lease(30_000, 50_000, 10, () => false)).toEqual([]);
      // A requeue makes a delivered one due now, with a new window.
      await store.requeue("t2", c.id, 31_000);
      expect(await store.delivery("t2", "other", c.id)).toMatchObject({ status: "pending", next_attempt_at: 31_000, window_start: 31_000 });
      expect((await store.lease(31_000, 50_000, 1, () => true)).length).toBe(1);
    });

    test("a test delivery carries its body; the sweep and the endpoint's removal go in bounded steps", async () => {
      await append("t1", [ev("deal.created"), ev("deal.updated")], 100_000);
      await store.insertTest({
        tenant_id: "t1", id: "tX", endpoint_id: "all", event_seq: null, event_type: "webhook.test", payload: '{"type":"webhook.test"}', status: "pending",
        attempts: 0, next_attempt_at: 100_000, window_start: 100_000, last_status: null, last_duration_ms: null, last_error: null, created_at: 100_000, updated_at: 100_000,
      });
      const [leased] = (await store.lease(100_000, 200_000, 50, (d) => d.id === "tX"));
      expect(leased).toMatchObject({ id: "tX", payload: '{"type":"webhook.test"}', ev_data: null });
      expect(await store.finish("t1", "tX", 1, { kind: "failed" }, { status: 410, durationMs: 3, error: null }, 100_001)).toBe("recorded");
      expect(await store.sweepStep(100_002, 1000)).toBeGreaterThanOrEqual(1);
      expect(await store.delivery("t1", "all", "tX")).toBeNull();
      const before = await store.deliveryCount("t1", "all");
      expect(before).toBeGreaterThan(1);
      expect(await store.removeDeliveries("t1", "all", 1)).toBe(1);
      expect(await store.deliveryCount("t1", "all")).toBe(before - 1);
      await store.remove("t1", "all");
      expect(await store.byId("t1", "all")).toBeNull();
      expect(await store.deliveryCount("t1", "all")).toBe(0);
    });
  });
}
