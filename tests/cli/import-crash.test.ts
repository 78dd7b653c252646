import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "../server";

/**
 * Issue 27: an import job killed with SIGKILL half-way (some batches committed, others not) is
 * rolled back when the server starts again: the organization has exactly the deals it had before,
 * the job says failed, and no undo entry is left. Then the same file, imported again without a
 * kill, lands whole. SQLite: the server's own database file, read directly.
 */
const dir = mkdtempSync(join(tmpdir(), "suite-import-crash-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ROWS = 6_000;
const file = `title,account_name,value,external_id\n${Array.from({ length: ROWS }, (_, i) => `Crash deal ${i},Crash Co,${i}.00,ext-${i}`).join("\n")}\n`;

test("SIGKILL mid-import: after the restart the file landed whole or not at all", async () => {
  const db = join(dir, "suite.db");
  // Its uploads land in the test's folder (a killed server leaves its file behind).
  let server = await startServer(db, { TMPDIR: dir });
  const org = await server.call("POST", "/api/v1/auth/signup", { body: { email: "admin@crash.test", password: "kill nine password 1", tenant_name: "Crash", subdomain: "crash" } });
  expect(org.status).toBe(201);
  const as = { token: org.body.access_token as string, tenant: "crash" };
  expect((await server.call("POST", "/api/v1/crm/accounts", { ...as, body: { name: "Crash Co" } })).status).toBe(201);
  const send = (url: string) =>
    fetch(`${url}/api/v1/crm/deals/import`, { method: "POST", headers: { authorization: `Bearer ${as.token}`, "x-tenant": "crash", "content-type": "text/csv" }, body: file });
  const deals = () => {
    const d = new Database(db, { readonly: true });
    try {
      return (d.query("SELECT count(*) AS n FROM deals").get() as { n: number }).n;
    } finally {
      d.close();
    }
  };

  const started = await send(server.url);
  expect(started.status).toBe(202);
  const job = (await started.json()) as { id: string; total: number };
  expect(job.total).toBe(ROWS);
  // Killed once some batches have committed and before the last.
  let seen = 0;
  for (let i = 0; i < 2_000; i++) {
    const j = await server.call("GET", `/api/v1/crm/jobs/${job.id}`, as);
    seen = j.body.done;
    if (seen > 0) break;
    await Bun.sleep(2);
  }
  server.process.kill("SIGKILL");
  await server.process.exited;
  expect(seen).toBeGreaterThan(0);
  expect(seen).toBeLessThan(ROWS);
  const halfway = deals();
  expect(halfway).toBeGreaterThan(0);

  server = await startServer(db, { TMPDIR: dir });
  try {
    let after: { status: string; message: string | null } | null = null;
    for (let i = 0; i < 2_000; i++) {
      after = (await server.call("GET", `/api/v1/crm/jobs/${job.id}`, as)).body;
      if (after!.status !== "running") break;
      await Bun.sleep(10);
    }
    expect(after).toMatchObject({ status: "failed", message: expect.stringContaining("nothing of it was kept") });
    expect(deals()).toBe(0);
    const d = new Database(db, { readonly: true });
    expect((d.query("SELECT count(*) AS n FROM crm_job_undo").get() as { n: number }).n).toBe(0);
    expect((d.query("SELECT coalesce(sum(n), 0) AS n FROM deal_counts WHERE assignee = '*'").get() as { n: number }).n).toBe(0);
    d.close();

    // The same file again, not killed: whole; and a third time: the same data, every row unchanged.
    for (const expected of [{ added: ROWS, unchanged: 0 }, { added: 0, unchanged: ROWS }]) {
      const again = await send(server.url);
      expect(again.status).toBe(202);
      const id = ((await again.json()) as { id: string }).id;
      let done: Record<string, unknown> = {};
      for (let i = 0; i < 6_000; i++) {
        done = (await server.call("GET", `/api/v1/crm/jobs/${id}`, as)).body;
        if (done.status !== "running") break;
        await Bun.sleep(10);
      }
      expect(done).toMatchObject({ status: "succeeded", done: ROWS, updated: 0, ...expected });
      expect(deals()).toBe(ROWS);
    }
    process.stdout.write(`import crash: killed at ${seen} of ${ROWS} rows written (${halfway} deals visible); after the restart 0, then ${ROWS} whole\n`);
  } finally {
    server.kill();
  }
}, 180_000);
