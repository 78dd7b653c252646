// Where one deal-list request's time goes, in-process (no sockets): the whole request through
// app.handle, and each part alone (authentication, the module check, the list, its JSON, the
// access-log line, the framework with no work), and the same work in a straight line without the
// framework. The fastest of several rounds is the steadier figure on a machine others load. Logs
// go to stdout as in production: run it with stdout sent to /dev/null.
//   bun bench/probes/request-profile.ts [DB] > /dev/null     (DB seeded with PROFILE_DEALS deals when missing)
// PROFILE_ONLY=name runs only the parts whose name contains it; PROFILE_N sets the iterations.
// PROFILE_BASE=DIR (another checkout, e.g. `git worktree add DIR main`) times the whole request
// through DIR's app and this one's in alternating rounds, in this one process: a before/after
// that a loaded machine disturbs alike.
import { existsSync } from "node:fs";
import { Elysia } from "elysia";
import { createApp } from "../../src/app";
import { loadConfig } from "../../src/config";
import { createContext } from "../../src/context";
import { readDealQuery } from "../../src/crm/routes";
import { benchMemberToken } from "./member-login";
import { eventLoopTurns } from "../process-support";
import { seedOrganizations } from "../seed";
import { median } from "../stats";

const dbFile = process.argv[2] ?? "/tmp/suite-profile.db";
const N = Number(process.env.PROFILE_N ?? 20_000);
const only = process.env.PROFILE_ONLY;
const ROUNDS = Number(process.env.PROFILE_ROUNDS ?? 10);
const say = (s: string) => process.stderr.write(`${s}\n`);
const PASSWORD = "profile password 1";
const turn = eventLoopTurns();

const fresh = !existsSync(dbFile);
const ctx = createContext({
  config: loadConfig({}, { SUITE_DB: dbFile, SUITE_ACCESS_TTL: "7200", SUITE_JWT_SECRET: "profile-secret-profile-secret-0123456789" }),
});
if (fresh) {
  await seedOrganizations(ctx, [{ subdomain: "bigco", deals: Number(process.env.PROFILE_DEALS ?? 100_000) }], PASSWORD, "profile");
}
const app = createApp(ctx);
const token = await benchMemberToken(app, ctx.db, PASSWORD);
const URL_ = "http://localhost/api/v1/crm/deals";
const auth = await ctx.auth.authenticate(token);
const listed = await ctx.deals.list(auth, readDealQuery(URL_));

/** Runs `fn` N times (after a warm-up) and prints CPU and wall µs per call. */
/**
 * Runs `fn` N times after a warm-up, in ROUNDS rounds, and prints µs per call: the fastest round's
 * wall time (the least disturbed by other processes on a shared machine) and the median round's.
 */
async function part(name: string, fn: () => unknown, n = N, batch = 1) {
  if (only && !name.includes(only)) return;
  for (let i = 0; i < Math.min(2000, n); i++) {
    await fn();
    await turn();
  }
  const per = Math.max(1, Math.floor(n / ROUNDS));
  const rounds: number[] = [];
  const cpuBefore = process.cpuUsage();
  for (let r = 0; r < ROUNDS; r++) {
    const t = performance.now();
    for (let i = 0; i < per; i++) {
      await fn();
      await turn();
    }
    rounds.push(((performance.now() - t) * 1000) / per / batch);
  }
  const cpu = process.cpuUsage(cpuBefore);
  const calls = per * ROUNDS * batch;
  say(
    `${name.padEnd(36)} best ${Math.min(...rounds).toFixed(1).padStart(6)} µs   median ${median(rounds).toFixed(1).padStart(6)} µs   cpu ${((cpu.user + cpu.system) / calls).toFixed(1).padStart(6)} µs`,
  );
}

const headers = { authorization: `Bearer ${token}` };
const first = await app.handle(new Request(URL_, { headers }));
const body = await first.text();
if (first.status !== 200) throw new Error(`list: ${first.status} ${body}`);
say(`default list: ${body.length} bytes, total ${JSON.parse(body).total}; ${N} iterations each`);

const wholeStatuses = new Map<number, number>();
await part("whole request (app.handle)", async () => {
  const r = await app.handle(new Request(URL_, { headers }));
  await r.text();
  wholeStatuses.set(r.status, (wholeStatuses.get(r.status) ?? 0) + 1);
});
if (wholeStatuses.size > 0 && [...wholeStatuses.keys()].some((s) => s !== 200)) say(`  statuses: ${JSON.stringify([...wholeStatuses])}`);
// 32 requests in flight at once, as wrk's connections keep them: interleaving at every await.
await part("whole request, 32 at a time", async () => {
  await Promise.all(Array.from({ length: 32 }, async () => (await app.handle(new Request(URL_, { headers }))).text()));
}, Math.ceil(N / 32), 32);
await part("  same work, straight line", async () => {
  const started = performance.now();
  // The session, its user and tenant and the module in one read (what the auth guard does), then the page.
  const p = await ctx.auth.authenticate(token, "crm");
  const page = await ctx.deals.list(p, readDealQuery(URL_));
  const res = Response.json(page, { headers: { "content-type": "application/json", "x-request-id": crypto.randomUUID() } });
  ctx.log({ level: "info", msg: "request", method: "GET", path: "/api/v1/crm/deals", status: 200, duration_ms: performance.now() - started, request_id: "x" });
  return res.text();
});
await part("  health (core hooks, no auth)", async () => (await app.handle(new Request("http://localhost/api/v1/health"))).text());
await part("  authenticate (token + session + module)", () => ctx.auth.authenticate(token, "crm"));
await part("    token verify only", () => ctx.tokens.verify(token, "access"));
await part("  module check alone (other routes)", () => ctx.tenants.requireModule(auth.tenantId, "crm"));
await part("  list service (query + count)", () => ctx.deals.list(auth, readDealQuery(URL_)));
await part("  JSON of the page", () => JSON.stringify(listed));
await part("  Response.json(page).text()", () => Response.json(listed).text());
await part("  new Response(JSON.stringify(page))", () => new Response(JSON.stringify(listed), { headers: { "content-type": "application/json" } }).text());
await part("  access-log line (to stdout)", () => ctx.log({ level: "info", msg: "request", method: "GET", path: "/api/v1/crm/deals", status: 200, duration_ms: 0.12, request_id: "x" }));
const bare = new Elysia().get("/api/v1/crm/deals", () => listed);
await part("  bare Elysia, same object", async () => (await bare.handle(new Request(URL_, { headers }))).text());
await part("  new Request + Response only", async () => {
  new Request(URL_, { headers });
  return new Response(body, { headers: { "content-type": "application/json" } }).text();
});

if (process.env.PROFILE_BASE) {
  const base = process.env.PROFILE_BASE;
  const other = await import(`${base}/src/context.ts`);
  const otherCtx = other.createContext({ config: ctx.config }) as typeof ctx;
  const otherApp = (await import(`${base}/src/app.ts`)).createApp(otherCtx) as typeof app;
  const runs: Array<[string, typeof app]> = [
    [`before (${base})`, otherApp],
    ["after (this checkout)", app],
  ];
  const best = new Map<string, number>();
  const cpu = new Map<string, number>();
  const per = Math.max(1, Math.floor(N / ROUNDS));
  for (const [, a] of runs)
    for (let i = 0; i < 2000; i++) {
      await (await a.handle(new Request(URL_, { headers }))).text();
      await turn();
    }
  for (let r = 0; r < ROUNDS * 2; r++) {
    for (const [name, a] of runs) {
      const c = process.cpuUsage();
      const t = performance.now();
      for (let i = 0; i < per; i++) {
        const res = await a.handle(new Request(URL_, { headers }));
        await res.text();
        if (res.status !== 200) throw new Error(`${name}: ${res.status}`);
        await turn();
      }
      best.set(name, Math.min(best.get(name) ?? Number.POSITIVE_INFINITY, ((performance.now() - t) * 1000) / per));
      const d = process.cpuUsage(c);
      cpu.set(name, Math.min(cpu.get(name) ?? Number.POSITIVE_INFINITY, (d.user + d.system) / per));
    }
  }
  for (const [name] of runs) say(`whole request, ${name.padEnd(48)} best ${best.get(name)!.toFixed(1)} µs   cpu ${cpu.get(name)!.toFixed(1)} µs`);
  otherCtx.close();
}
ctx.close();
