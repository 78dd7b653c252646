// What `suite tenant disable` costs every authenticated request: the session lookup reads the
// tenant's disabled_at in the statement it already runs (the tenant is joined for its subdomain).
// Times that lookup with and without the column, interleaved, and authenticate() as a whole.
// bun bench/probes/tenant-disabled-check.ts [N]   (a throwaway database in the temp folder)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { createContext } from "../../src/context";

const N = Number(process.argv[2] ?? 200_000);
const dir = mkdtempSync(join(tmpdir(), "suite-bench-"));
const ctx = createContext({ config: loadConfig({}, { SUITE_DB: join(dir, "bench.db"), SUITE_HASH_CONCURRENCY: "1" }), log: () => {} });
const org = { email: "a@bench.io", password: "long enough pw", tenant_name: "Bench", subdomain: "bench" };
const { tenant, tokens } = await ctx.tenants.createOrganization(org, { ip: null, userAgent: null }, "cli");
const { sid_hash } = ctx.db.query("SELECT sid_hash FROM sessions WHERE tenant_id = ?").get(tenant.id) as { sid_hash: string };
const from = "FROM sessions s JOIN users u ON u.id = s.user_id JOIN tenants t ON t.id = s.tenant_id WHERE s.sid_hash = ?1";
const without = ctx.db.prepare(`SELECT s.*, u.role, u.email, t.subdomain ${from}`);
const withCheck = ctx.db.prepare(`SELECT s.*, u.role, u.email, t.subdomain, t.disabled_at AS tenant_disabled_at ${from}`);
const time = (q: typeof without) => {
  const t0 = Bun.nanoseconds();
  for (let i = 0; i < N; i++) q.get(sid_hash);
  return (Bun.nanoseconds() - t0) / N;
};
for (let round = 0; round < 6; round++) {
  // Alternate which runs first, so that warm-up and the machine's other load fall on both.
  const [a, b] = round % 2 ? [time(withCheck), time(without)] : [time(without), time(withCheck)].reverse();
  console.log(`round ${round}: lookup without ${b.toFixed(0)} ns, with disabled_at ${a.toFixed(0)} ns`);
}
const t0 = Bun.nanoseconds();
for (let i = 0; i < N / 4; i++) await ctx.auth.authenticate(tokens.access_token);
console.log(`authenticate (JWT verify, lookup, checks): ${((Bun.nanoseconds() - t0) / (N / 4)).toFixed(0)} ns`);
ctx.close();
rmSync(dir, { recursive: true, force: true });
