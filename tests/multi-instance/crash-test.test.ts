import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ON_POSTGRES, SKIP_NOTE } from "./support";

/**
 * `bun run crash-test --postgres`, small: three servers from source on a PostgreSQL cluster the
 * script starts itself, three rounds of six clients, each round one server killed at random with
 * SIGKILL mid-load and every acknowledged write checked, then every invitation's mail awaited.
 */
describe.skipIf(!ON_POSTGRES)(`the crash test on PostgreSQL with three instances ${SKIP_NOTE}`, () => {
  test("one of three killed at random, three times: nothing acknowledged is lost, every invitation mailed, all stop with exit 0", async () => {
    const root = join(import.meta.dir, "..", "..");
    const p = Bun.spawn([process.execPath, "scripts/crash-test.ts", "--source", "--postgres", "--rounds", "3", "--clients", "6"], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? root },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    if (code !== 0) console.error(stdout + stderr);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const line = /^crash-test \(PostgreSQL, three servers\): 3 rounds, (\d+) writes acknowledged, (\d+) lost, .*, (\d+)\/(\d+) invitation mails delivered \((\d+) duplicates\)$/m.exec(stdout);
    expect(line).not.toBeNull();
    const [, acknowledged, lost, delivered, invited] = line!.map(Number);
    expect(acknowledged).toBeGreaterThan(0);
    expect(lost).toBe(0);
    expect(delivered).toBe(invited!);
    expect(stdout.match(/^round \d+: .* server [123] of 3 killed .* lost 0$/gm)).toHaveLength(3);
    expect(stdout).toContain("SIGTERM -> exit 0, 0, 0");
    console.log(line![0]);
  }, 180_000);
});
