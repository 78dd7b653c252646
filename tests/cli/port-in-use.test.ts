import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { noteLog } from "../security/ledger";
import { freePort, startServer } from "../server";

const dir = mkdtempSync(join(tmpdir(), "suite-port-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Issue 13, 4b: Elysia asks for SO_REUSEPORT, under which a second server shared the port. */
test("a second suite serve on a port already served exits 69 with one line naming the port", async () => {
  const db = join(dir, "suite.db");
  const first = await startServer(db);
  try {
    const port = new URL(first.url).port;
    const second = Bun.spawn([process.execPath, join(import.meta.dir, "..", "..", "src", "main.ts"), "serve"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, SUITE_DB: db, SUITE_HOST: "127.0.0.1", SUITE_PORT: port, SUITE_HASH_CONCURRENCY: "2" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const exited = await Promise.race([second.exited, Bun.sleep(15_000).then(() => null)]);
    if (exited === null) second.kill("SIGKILL");
    const [stdout, stderr] = await Promise.all([new Response(second.stdout).text(), new Response(second.stderr).text()]);
    noteLog(stdout);
    noteLog(stderr);
    expect({ code: exited, stderr }).toEqual({ code: 69, stderr: `suite: port ${port} is already in use (another suite serve?)\n` });
    // It never said it was listening.
    expect(stdout).not.toContain('"listening"');

    // The first server still has the port to itself: every request is its own.
    for (let i = 0; i < 20; i++) expect((await first.call("GET", "/api/v1/health")).status).toBe(200);
    const stopped = await first.stop();
    expect(stopped.code).toBe(0);
    // Our 20 (and the start-up health checks) are in its log: none went to the second process.
    const answered = stopped.stdout.split("\n").filter((l) => l.includes('"msg":"request"') && l.includes('"path":"/api/v1/health"')).length;
    expect(answered).toBeGreaterThanOrEqual(20);
  } finally {
    first.kill();
  }
});

/**
 * The tests' own harness (tests/server.ts): a port chosen free can be taken before the server binds
 * it (three instances' PostgreSQL pools open outgoing connections on ephemeral ports meanwhile; a CI
 * run lost a start that way). startServer then tries a new port instead of failing the test.
 */
test("the harness starts its server on a new port when the port it chose was taken meanwhile", async () => {
  const holder = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("not a suite", { status: 503 }) });
  const taken = holder.port!;
  const chosen: number[] = [];
  const choose = () => {
    const port = chosen.length === 0 ? taken : freePort();
    chosen.push(port);
    return port;
  };
  const server = await startServer(join(dir, "retry.db"), {}, undefined, choose);
  try {
    expect(chosen[0]).toBe(taken);
    expect(chosen.length).toBe(2);
    expect(server.url).toBe(`http://127.0.0.1:${chosen[1]}`);
    expect((await server.call("GET", "/api/v1/health")).status).toBe(200);
  } finally {
    server.kill();
    holder.stop(true);
  }
});
