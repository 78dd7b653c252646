import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startInstances, type Instances } from "../support/instances";
import { type EmptyDatabase, emptyPostgresDatabase } from "../support/pg-database";
import { ON_POSTGRES, type Org, SKIP_NOTE, signup } from "./support";
import { sseReader } from "../events/support";

/**
 * The live stream across instances: an event written through one instance reaches a stream held
 * by another (LISTEN/NOTIFY carries the organization and the event's number; the stream's
 * instance reads the event from the table), and never another organization's stream.
 */
describe.skipIf(!ON_POSTGRES)(`events reach streams held by other instances ${SKIP_NOTE}`, () => {
  let db: EmptyDatabase;
  let g: Instances;
  let org: Org;
  let other: Org;

  beforeAll(async () => {
    db = await emptyPostgresDatabase("mevents");
    g = await startInstances(2, { databaseUrl: db.url });
    org = await signup(g, 0, "evmulti");
    other = await signup(g, 1, "evmultib");
  }, 120_000);
  afterAll(async () => {
    await g?.close();
    await db?.drop();
  });

  const stream = (i: number, token: string) => fetch(`${g.urls()[i]}/api/v1/events/stream`, { headers: { authorization: `Bearer ${token}` } });

  test("written via A, streamed via B (and the other way round); another organization's stream sees nothing", async () => {
    const onB = sseReader(await stream(1, org.access_token));
    const onA = sseReader(await stream(0, org.access_token));
    const otherOnB = sseReader(await stream(1, other.access_token));
    try {
      await onB.until(() => onB.comments.includes("connected"));
      await onA.until(() => onA.comments.includes("connected"));
      const a = await g.call(0, "POST", "/api/v1/crm/accounts", { token: org.access_token, body: { name: "Via A" } });
      expect(a.status).toBe(201);
      const [e] = await onB.take(1, 10_000);
      expect(e!.data).toMatchObject({ type: "account.created", data: { id: a.body.id, name: "Via A" } });
      const b = await g.call(1, "POST", "/api/v1/crm/accounts", { token: org.access_token, body: { name: "Via B" } });
      expect(b.status).toBe(201);
      const got = await onA.take(2, 10_000);
      expect(got.map((x) => x.data.data.name)).toEqual(["Via A", "Via B"]);
      expect(Number(got[1]!.id)).toBeGreaterThan(Number(got[0]!.id));
      await Bun.sleep(300);
      expect(otherOnB.events).toEqual([]);
    } finally {
      await Promise.all([onA.cancel(), onB.cancel(), otherOnB.cancel()]);
    }
  }, 60_000);
});
