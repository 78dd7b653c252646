import { afterEach, expect, test } from "bun:test";
import { openDatabase, writeTx } from "../../src/db/database";
import { STALL_LIMIT_MS, loopWindow, resetStallFigures, runAs, setStallLog, stallFigures, startLoopMonitor } from "../../src/db/stall-monitor";
import { sqliteRepos, testApp } from "../helpers";

/**
 * Issue 27's stall monitor: a SQLite write transaction or an event-loop turn held over 50 ms is
 * one JSON warning line naming the request's method and route template (or the job), and the
 * maxima are in stallFigures().
 */

afterEach(() => setStallLog(null));

test("a write transaction held past the limit is one warning naming the request's route, and the maximum is in the figures", async () => {
  const t = testApp();
  const warnings: Record<string, unknown>[] = [];
  setStallLog((line) => warnings.push(line));
  try {
    const org = await t.signup("stall");
    resetStallFigures();
    // The login's commit (its session and audit row) is made to hold the writer for 70 ms.
    const security = sqliteRepos(t.ctx).security;
    const auditInTx = security.auditInTx;
    security.auditInTx = (...a) => {
      Bun.sleepSync(70);
      return auditInTx(...a);
    };
    const login = await t.json("POST", "/api/v1/auth/login", { tenant: "stall", body: { email: org.email, password: org.password } });
    security.auditInTx = auditInTx;
    expect(login.status).toBe(200);
    const holds = warnings.filter((w) => w.kind === "write_hold");
    expect(holds).toHaveLength(1);
    expect(holds[0]).toMatchObject({ level: "warn", msg: "stall", work: "POST /api/v1/auth/login", limit_ms: STALL_LIMIT_MS });
    expect(holds[0]!.ms as number).toBeGreaterThanOrEqual(70);
    const f = stallFigures();
    expect(f.maxWriteHoldMs).toBeGreaterThanOrEqual(70);
    expect(f.maxWriteHoldWork).toBe("POST /api/v1/auth/login");
    expect(f.writeStalls).toBe(1);
    // A fast request warns about nothing.
    expect((await t.json("GET", "/api/v1/health")).status).toBe(200);
    expect(warnings.filter((w) => w.kind === "write_hold")).toHaveLength(1);
  } finally {
    await t.close();
  }
});

test("a job's held writer and a held event loop are named after the job", async () => {
  const db = openDatabase(":memory:");
  db.run("CREATE TABLE t (v INTEGER)");
  const warnings: Record<string, unknown>[] = [];
  setStallLog((line) => warnings.push(line));
  resetStallFigures();
  const stop = startLoopMonitor(10);
  try {
    await Bun.sleep(30);
    runAs("job housekeeping", () => writeTx(db, () => {
      db.run("INSERT INTO t VALUES (1)");
      Bun.sleepSync(60);
    }));
    runAs("job mail", () => Bun.sleepSync(80));
    await Bun.sleep(40);
  } finally {
    stop();
    db.close();
  }
  expect(warnings.find((w) => w.kind === "write_hold")).toMatchObject({ work: "job housekeeping" });
  const loop = warnings.filter((w) => w.kind === "event_loop");
  expect(loop.length).toBeGreaterThanOrEqual(1);
  expect(loop.at(-1)).toMatchObject({ work: "job mail" });
  expect(loop.at(-1)!.ms as number).toBeGreaterThanOrEqual(100);
  expect(stallFigures().maxLoopDelayMs).toBeGreaterThanOrEqual(100);
});

test("one loop monitor for the stall warnings and the metrics: shared, stopped by its last user, its window read and restarted", async () => {
  // A module instance of its own: in the fast lane other files' apps share this process, and their
  // monitor (the module's one timer) would keep ticking after this test's users stop.
  const { startLoopMonitor, loopWindow } = (await import(`../../src/db/stall-monitor.ts?own=${Date.now()}`)) as typeof import("../../src/db/stall-monitor");
  const stopA = startLoopMonitor();
  const stopB = startLoopMonitor();
  await Bun.sleep(30);
  loopWindow();
  stopA();
  // Still running for B: a held thread shows in the window.
  Bun.sleepSync(90);
  await Bun.sleep(30);
  const w = loopWindow();
  expect(w.maxMs).toBeGreaterThanOrEqual(60);
  expect(w.ticks).toBeGreaterThan(0);
  expect(loopWindow().maxMs).toBeLessThan(w.maxMs);
  stopB();
  stopB();
  // Stopped: no tick reaches the window any more.
  await Bun.sleep(60);
  expect(loopWindow().ticks).toBe(0);
});
