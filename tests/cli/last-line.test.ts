import { expect, test } from "bun:test";
import { join } from "node:path";
import { noteLog } from "../security/ledger";

const SERVE = join(import.meta.dir, "..", "..", "src", "cli", "serve.ts");

/**
 * `suite serve`'s last line of defence (issue 13): a rejection nobody handled and an exception
 * thrown from a timer are logged as errors, and the process goes on. Run in a child process: the
 * handlers are process-wide.
 */
test("an unhandled rejection and an uncaught exception are logged, not fatal", async () => {
  const script = `
    import { lastLineOfDefence } from ${JSON.stringify(SERVE)};
    lastLineOfDefence((line) => process.stdout.write(JSON.stringify(line) + "\\n"));
    Promise.reject(new Error("nobody caught this rejection"));
    setTimeout(() => { throw new TypeError("thrown from a timer"); }, 10);
    setTimeout(() => { process.stdout.write("still serving\\n"); process.exit(0); }, 200);
  `;
  const p = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  noteLog(stdout);
  noteLog(stderr);
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  const lines = stdout.trim().split("\n");
  expect(lines.at(-1)).toBe("still serving");
  const logged = lines.slice(0, -1).map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(logged).toEqual([
    expect.objectContaining({ level: "error", msg: "unhandled rejection", error: "Error", message: "nobody caught this rejection" }),
    expect.objectContaining({ level: "error", msg: "uncaught exception", error: "TypeError", message: "thrown from a timer" }),
  ]);
});
