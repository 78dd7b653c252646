// bun run release: the web app once, then `suite` cross-compiled for every platform we ship into
// dist/release/ (suite-linux-x64, …, suite-windows-x64.exe) with SHA256SUMS (`sha256sum -c`).
// Bun fetches each target's runtime from the npm registry (@oven/bun-<os>-<arch>) on first use and
// keeps it in ~/.bun/install/cache. Each line shows what the file weighs and how much of it is
// the Bun runtime alone (an empty script compiled for the same target) versus our bundle.
//
//   bun run release [--targets linux-x64,windows-x64] [--out DIR]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ROOT, compileSuite, mib, writeWebEmbed } from "./build";

export const TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "windows-x64"] as const;

/** The release file's name for a target: suite-linux-x64, suite-windows-x64.exe. */
export const releaseName = (target: string) => `suite-${target}${target.startsWith("windows") ? ".exe" : ""}`;

/** The target this machine runs, e.g. linux-x64 (Node's names: win32 → windows). */
export const hostTarget = () => `${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;

function option(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? undefined : process.argv[i + 1];
}

async function sha256(file: string): Promise<string> {
  const hasher = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(file).stream()) hasher.update(chunk);
  return hasher.digest("hex");
}

if (import.meta.main) {
  const started = performance.now();
  const targets = (option("targets")?.split(",") ?? [...TARGETS]).map((t) => t.trim());
  for (const t of targets) {
    if (!(TARGETS as readonly string[]).includes(t)) {
      console.error(`release: unknown target ${t} (one of ${TARGETS.join(", ")})`);
      process.exit(64);
    }
  }
  const outDir = resolve(option("out") ?? join(ROOT, "dist", "release"));
  const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;

  const entry = await writeWebEmbed();
  if (!entry) process.exit(1);
  rmSync(outDir, { recursive: true, force: true });

  // The runtime alone, per target: an empty script compiled the same way, then thrown away.
  const scratch = mkdtempSync(join(tmpdir(), "suite-release-"));
  writeFileSync(join(scratch, "empty.ts"), "");

  const sums: string[] = [];
  let failed: string | null = null;
  try {
    for (const target of targets) {
      const name = releaseName(target);
      const t0 = performance.now();
      const size = await compileSuite(entry, join(outDir, name), `bun-${target}`);
      const bare = await compileSuite(join(scratch, "empty.ts"), join(scratch, name), `bun-${target}`);
      if (size === null || bare === null) {
        failed = target;
        break;
      }
      rmSync(join(scratch, name), { force: true });
      sums.push(`${await sha256(join(outDir, name))}  ${name}`);
      const secs = ((performance.now() - t0) / 1000).toFixed(1);
      console.log(`${name.padEnd(24)} ${mib(size).padStart(10)}  = Bun runtime ${mib(bare)} + our bundle ${mib(size - bare)}  (${secs} s)`);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  if (failed) {
    console.error(`release: compiling for ${failed} failed`);
    process.exit(1);
  }
  writeFileSync(join(outDir, "SHA256SUMS"), `${sums.join("\n")}\n`);
  console.log(`release ${version}: ${targets.length} files and SHA256SUMS in ${outDir} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
}
