import { expect, test } from "bun:test";
import { join } from "node:path";

/**
 * The crash test of `bun run crash-test`, small: two rounds of four clients against the source,
 * each ended by SIGKILL, then a restart that must deliver every acknowledged invitation's mail.
 */
test("crash-test: nothing acknowledged is lost across SIGKILLs, integrity ok, every invitation mailed", async () => {
  const root = join(import.meta.dir, "..", "..");
  const p = Bun.spawn([process.execPath, "scripts/crash-test.ts", "--source", "--rounds", "2", "--clients", "4"], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? root },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) console.error(stdout + stderr);
  expect(stderr).toBe("");
  expect(code).toBe(0);
  const line = /^crash-test: 2 rounds, (\d+) writes acknowledged, (\d+) lost, integrity ok, (\d+)\/(\d+) invitation mails delivered \((\d+) duplicates\)$/m.exec(stdout);
  expect(line).not.toBeNull();
  const [, acknowledged, lost, delivered, invited] = line!.map(Number);
  expect(acknowledged).toBeGreaterThan(0);
  expect(lost).toBe(0);
  expect(invited).toBeGreaterThan(0);
  expect(delivered).toBe(invited!);
  expect(stdout.match(/^round \d+: .* lost 0, integrity ok$/gm)).toHaveLength(2);
  expect(stdout).toContain("SIGTERM -> exit 0");
}, 60_000);
