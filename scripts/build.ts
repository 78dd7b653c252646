// bun run build: compiles src/main.ts, with schema.sql and every dependency inside, into dist/suite.
import { mkdirSync, statSync } from "node:fs";

const outfile = process.argv[2] ?? "dist/suite";
mkdirSync("dist", { recursive: true });
const started = performance.now();
const proc = Bun.spawnSync([process.execPath, "build", "--compile", "--minify", "src/main.ts", "--outfile", outfile], {
  stdout: "inherit",
  stderr: "inherit",
});
if (proc.exitCode !== 0) process.exit(proc.exitCode ?? 1);
const mb = (statSync(outfile).size / 1024 / 1024).toFixed(1);
console.log(`built ${outfile} (${mb} MiB) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
