// `bun run release` for this machine's platform only (CI builds all five, in .ci/run): the file
// is named for its platform, SHA256SUMS checks it with `sha256sum -c`, and it runs.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TARGETS, hostTarget, releaseName } from "../../scripts/release";
import { startServer } from "../server";

const ROOT = join(import.meta.dir, "..", "..");
const out = mkdtempSync(join(tmpdir(), "suite-release-test-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

test("the five platforms, each under its own name", () => {
  expect(TARGETS.map(releaseName)).toEqual(["suite-linux-x64", "suite-linux-arm64", "suite-darwin-x64", "suite-darwin-arm64", "suite-windows-x64.exe"]);
});

test(
  "release builds this platform's file with a SHA256SUMS that sha256sum -c accepts, and the file answers --version",
  () => {
    const target = hostTarget();
    expect(TARGETS as readonly string[]).toContain(target);
    const run = Bun.spawnSync([process.execPath, join(ROOT, "scripts", "release.ts"), "--targets", target, "--out", out], { cwd: ROOT });
    expect(run.stderr.toString()).toBe("");
    expect(run.exitCode).toBe(0);
    const name = releaseName(target);
    const line = run.stdout.toString().match(new RegExp(`${name.replace(".", "\\.")} +[\\d.]+ MiB += Bun runtime [\\d.]+ MiB \\+ our bundle ([\\d.]+) MiB`));
    expect(line).not.toBeNull();
    // 3.8 MiB today: 3.6 before webhooks, bulk changes, the record pages and the operator's backups
    // (their server code and web chunks); 1.7 before passkeys (@simplewebauthn/server, 0.3 MiB of
    // JavaScript) and the common-password list (0.8 MiB gzipped, issue 33); 4.0 before Swagger UI
    // went in gzipped and the bundle's source stayed ASCII (one non-ASCII character makes Bun store
    // all of it as UTF-16, twice the bytes: that alone would take it past this bound).
    expect(Number(line![1])).toBeLessThan(4.4);
    expect(readdirSync(out).sort()).toEqual(["SHA256SUMS", name].sort());
    expect(readFileSync(join(out, "SHA256SUMS"), "utf8")).toMatch(new RegExp(`^[0-9a-f]{64}  ${name.replace(".", "\\.")}\\n$`));

    const check = Bun.spawnSync(["sha256sum", "-c", "SHA256SUMS"], { cwd: out });
    expect(check.stdout.toString()).toBe(`${name}: OK\n`);
    expect(check.exitCode).toBe(0);

    const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;
    const answer = Bun.spawnSync([join(out, name), "--version"]);
    expect(answer.stdout.toString()).toBe(`suite ${version}\n`);
    expect(answer.exitCode).toBe(0);
  },
  120_000,
);

test("the released file ignores a bunfig.toml and a .env in the folder it runs from", () => {
  const folder = mkdtempSync(join(tmpdir(), "suite-cwd-"));
  try {
    writeFileSync(join(folder, "evil.ts"), `require("node:fs").writeFileSync(${JSON.stringify(join(folder, "ran"))}, "x");`);
    writeFileSync(join(folder, "bunfig.toml"), 'preload = ["./evil.ts"]\n');
    // Loaded, this setting would stop the command (exit 78).
    writeFileSync(join(folder, ".env"), "SUITE_SIGNUP=sometimes\n");
    const r = Bun.spawnSync([join(out, releaseName(hostTarget())), "migrate", "--db", join(folder, "suite.db")], { cwd: folder, env: { PATH: process.env.PATH ?? "/usr/bin" } });
    expect({ code: r.exitCode, stderr: r.stderr.toString() }).toEqual({ code: 0, stderr: "" });
    expect(existsSync(join(folder, "ran"))).toBe(false);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

test(
  "the released file serves the API reference's assets it holds gzipped, gzipped or plain as asked",
  async () => {
    const server = await startServer(join(out, "data", "suite.db"), {}, [join(out, releaseName(hostTarget()))]);
    try {
      for (const name of ["swagger-ui-bundle.js", "swagger-ui.css"]) {
        const original = readFileSync(join(ROOT, "node_modules", "swagger-ui-dist", name), "utf8");
        const gzipped = await fetch(`${server.url}/api/v1/docs/${name}`, { headers: { "accept-encoding": "gzip" } });
        expect(gzipped.headers.get("content-encoding")).toBe("gzip");
        expect(await gzipped.text()).toBe(original);
        const plain = await fetch(`${server.url}/api/v1/docs/${name}`, { headers: { "accept-encoding": "identity" } });
        expect(plain.headers.get("content-encoding")).toBeNull();
        expect(await plain.text()).toBe(original);
      }
      expect((await server.call("GET", "/api/v1/docs")).status).toBe(200);
    } finally {
      expect((await server.stop()).code).toBe(0);
    }
  },
  120_000,
);
