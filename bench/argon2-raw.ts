// The machine's raw argon2 verify throughput, in a process of its own (no server, no HTTP):
// bun bench/argon2-raw.ts CONCURRENCY SECONDS OUT.json. It keeps CONCURRENCY verifies in flight
// (the server's own limit) with the server's exact parameters, and counts those finished.
import { ARGON2 } from "../src/security/passwords";

const [concurrencyArg, secondsArg, outFile] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
const seconds = Number(secondsArg);
const password = "flood password 1";
const hash = await Bun.password.hash(password, ARGON2);
// One warm-up round, so the first allocations are not timed.
await Promise.all(Array.from({ length: concurrency }, () => Bun.password.verify(password, hash)));

let done = 0;
const started = performance.now();
const until = started + seconds * 1000;
async function lane(): Promise<void> {
  while (performance.now() < until) {
    if (!(await Bun.password.verify(password, hash))) throw new Error("verify answered false");
    done++;
  }
}
await Promise.all(Array.from({ length: concurrency }, lane));
const elapsed = (performance.now() - started) / 1000;
await Bun.write(outFile!, JSON.stringify({ concurrency, seconds: elapsed, verifies: done, per_second: done / elapsed, params: ARGON2 }));
