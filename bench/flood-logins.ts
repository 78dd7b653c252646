/// <reference path="./autocannon.d.ts" />
// The login flood, a process of its own: bun bench/flood-logins.ts CONFIG.json OUT.json.
// autocannon keeps CONNECTIONS sign-ins in flight, rotating over the accounts (so no account has
// more than one attempt in flight: its limit counts attempts until a success clears them) and
// giving every request a new X-Forwarded-For address (a botnet: no per-IP limit is reached).
import autocannon from "autocannon";

interface LoginsConfig {
  base: string;
  subdomain: string;
  emails: string[];
  password: string;
  connections: number;
  seconds: number;
}

const [configFile, outFile] = process.argv.slice(2);
const c = (await Bun.file(configFile!).json()) as LoginsConfig;
let n = 0;
const addressOf = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

const cpuStarted = process.cpuUsage();
const result = await autocannon({
  url: c.base,
  connections: c.connections,
  duration: c.seconds,
  // A sign-in queued behind a flood may wait long; a timeout would count as an error, not a 429.
  timeout: 60,
  requests: [
    {
      method: "POST",
      path: "/api/v1/auth/login",
      setupRequest: (req: Record<string, any>) => {
        const i = n++;
        return {
          ...req,
          headers: { ...req.headers, "content-type": "application/json", "x-tenant": c.subdomain, "x-forwarded-for": addressOf(i + 1) },
          body: JSON.stringify({ email: c.emails[i % c.emails.length], password: c.password }),
        };
      },
    },
  ],
});
const cpu = process.cpuUsage(cpuStarted);
const statuses: Record<string, number> = {};
for (const [code, s] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = s.count;
const ok = statuses["200"] ?? 0;
await Bun.write(
  outFile!,
  JSON.stringify({
    seconds: result.duration,
    ok,
    ok_per_second: ok / result.duration,
    statuses,
    errors: result.errors,
    timeouts: result.timeouts,
    latency_p50_ms: result.latency.p50,
    latency_p99_ms: result.latency.p99,
    cpu_seconds: (cpu.user + cpu.system) / 1e6,
  }),
);
