// What a sign-in without a tenant costs, by how many accounts the address has (issue 13, 2a):
// bun bench/probes/login-any-tenant.ts [ROUNDS] [pooled]. In-process app, the server's own hasher (argon2
// on its threads, one lane per core; `pooled`: Bun.password's pool, whose threads are not under
// SCHED_IDLE, steadier on a machine others load); the rounds interleave the addresses, so load
// drifts hit all alike.
import { createApp } from "../../src/app";
import { loadConfig } from "../../src/config";
import { createContext } from "../../src/context";
import { openDatabase } from "../../src/db/database";
import { createPasswordHasher, threadedPasswordHasher } from "../../src/security/passwords";
import { percentile } from "../stats";

const rounds = Number(process.argv[2] ?? 20);
const config = loadConfig({}, { SUITE_DB: ":memory:" });
const hasher = process.argv[3] === "pooled" ? createPasswordHasher(config.hashConcurrency) : threadedPasswordHasher(config.hashConcurrency);
const ctx = createContext({ config, db: openDatabase(":memory:"), hasher, log: () => {} });
ctx.hasher.warm();
const app = createApp(ctx);
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  app.handle(new Request(`http://localhost${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }));

const PASSWORD = "correct horse battery";
for (let n = 1; n <= 3; n++) {
  for (let i = 0; i < n; i++) {
    const r = await post("/api/v1/auth/signup", { email: `n${n}@bench.test`, password: PASSWORD, tenant_name: "Bench", subdomain: `b${n}x${i}` });
    if (r.status !== 201) throw new Error(`signup ${r.status}`);
  }
}
const cases: Array<[string, string, Record<string, string>]> = [
  ["0 accounts, no tenant", "n0@bench.test", {}],
  ["1 account, no tenant", "n1@bench.test", {}],
  ["2 accounts, no tenant", "n2@bench.test", {}],
  ["3 accounts, no tenant", "n3@bench.test", {}],
  ["1 account, tenant named", "n1@bench.test", { "x-tenant": "b1x0" }],
];
const times = new Map<string, number[]>(cases.map(([name]) => [name, []]));
for (let r = 0; r < rounds; r++) {
  for (const [name, email, headers] of cases) {
    const t0 = performance.now();
    const res = await post("/api/v1/auth/login", { email, password: `wrong password ${r}` }, { ...headers });
    times.get(name)!.push(performance.now() - t0);
    if (res.status !== 401) throw new Error(`${name}: ${res.status}`);
  }
  // Stay under the per-account limit (10 per 15 min) and the per-IP one.
  ctx.db.run("DELETE FROM rate_limits");
}
for (const [name, ts] of times) {
  const q = (p: number) => percentile(ts, p).toFixed(1);
  console.log(`${name.padEnd(26)} p50 ${q(0.5)} ms  p90 ${q(0.9)} ms  (${ts.length} sign-ins)`);
}
ctx.close();
process.exit(0);
