// bun run smoke [target...]: starts each target (`src` = bun src/main.ts, or a path to a built
// binary) on a fresh database, drives one sign-in flow over HTTP, stops it with SIGTERM, and checks
// that every target answered exactly the same statuses and shapes. Exits non-zero on any failure.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const targets = process.argv.slice(2).length ? process.argv.slice(2) : ["src"];
const command = (target: string) => (target === "src" ? [process.execPath, "src/main.ts"] : [target]);

function fail(message: string): never {
  console.error(`smoke: ${message}`);
  process.exit(1);
}

async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

/** Status plus the body's shape: keys, codes and error types, never values that differ per run. */
function shape(status: number, body: unknown): string {
  const walk = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(walk) : v && typeof v === "object"
      ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, ["code", "type", "token_type", "status", "role"].includes(k) ? x : walk(x)]))
      : typeof v;
  return `${status} ${JSON.stringify(walk(body))}`;
}

async function run(target: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), "suite-smoke-"));
  const db = join(dir, "suite.db");
  const env = { ...process.env, SUITE_DB: db, SUITE_HOST: "127.0.0.1" };
  try {
    const migrate = Bun.spawnSync([...command(target), "migrate"], { env });
    if (migrate.exitCode !== 0) fail(`${target} migrate exited ${migrate.exitCode}: ${migrate.stderr}`);

    const port = await freePort();
    const server = Bun.spawn([...command(target), "serve", "--port", String(port)], { env, stdout: "pipe", stderr: "pipe" });
    const base = `http://127.0.0.1:${port}/api/v1`;
    for (let i = 0; ; i++) {
      if (await fetch(`${base}/health`).then((r) => r.ok, () => false)) break;
      if (i > 100) fail(`${target} did not answer /api/v1/health within 10 s`);
      await Bun.sleep(100);
    }

    const transcript: string[] = [];
    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(path.startsWith("http") ? path : `${base}${path}`, {
        method,
        headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      });
      const json = await res.json().catch(() => null);
      transcript.push(`${method} ${path.replace(/^http:\/\/[^/]+/, "")} -> ${shape(res.status, json)}`);
      return { status: res.status, body: json as Record<string, any> };
    };

    await call("GET", "/health");
    await call("GET", `http://127.0.0.1:${port}/health`);
    await call("POST", "/auth/signup", { email: "x", password: "short", tenant_name: "", subdomain: "-" });
    await call("POST", "/auth/signup", "{not json");
    const signup = await call("POST", "/auth/signup", { email: "owner@smoke.test", password: "a test of the binary", tenant_name: "Smoke", subdomain: "smoke" });
    if (signup.status !== 201) fail(`${target} signup answered ${signup.status}`);
    await call("POST", "/auth/login", { email: "owner@smoke.test", password: "wrong password" }, { "x-tenant": "smoke" });
    const login = await call("POST", "/auth/login", { email: "owner@smoke.test", password: "a test of the binary" }, { "x-tenant": "smoke" });
    if (login.status !== 200) fail(`${target} login answered ${login.status}`);
    const bearer = { authorization: `Bearer ${login.body.access_token}` };
    await call("GET", "/auth/me", undefined, bearer);
    // The features that lean on what the binary must carry inside: FTS5 search, otpauth, mail, docs.
    const account = await call("POST", "/crm/accounts", { name: "Smoke Industries" }, bearer);
    await call("POST", "/crm/deals", { title: "Smoke deal", account_id: account.body.id, value: "1234.5" }, bearer);
    await call("GET", "/crm/deals?search=industr&sort_by=value", undefined, bearer);
    await call("POST", "/auth/2fa/setup", undefined, bearer);
    await call("POST", "/auth/magic-link", { email: "owner@smoke.test" }, { "x-tenant": "smoke" });
    await call("POST", "/users/invite", { email: "new@smoke.test" }, bearer);
    const doc = await fetch(`${base}/openapi.json`);
    const paths = Object.keys(((await doc.json()) as { paths?: object }).paths ?? {}).length;
    transcript.push(`GET /openapi.json -> ${doc.status} ${paths} paths`);
    for (const asset of ["/docs", "/docs/swagger-ui-bundle.js", "/docs/swagger-ui.css"]) {
      const res = await fetch(`${base}${asset}`);
      transcript.push(`GET ${asset} -> ${res.status} ${res.headers.get("content-type")} ${(await res.arrayBuffer()).byteLength} bytes`);
    }
    const refreshed = await call("POST", "/auth/refresh", { refresh_token: login.body.refresh_token });
    await call("GET", "/auth/sessions", undefined, { authorization: `Bearer ${refreshed.body.access_token}` });
    await call("POST", "/auth/logout-all", undefined, { authorization: `Bearer ${refreshed.body.access_token}` });
    await call("GET", "/auth/me", undefined, { authorization: `Bearer ${refreshed.body.access_token}` });

    server.kill("SIGTERM");
    const code = await Promise.race([server.exited, Bun.sleep(10_000).then(() => "timeout")]);
    if (code !== 0) fail(`${target} did not stop cleanly on SIGTERM (${code})`);
    const log = await new Response(server.stdout).text();
    for (const secret of ["a test of the binary", login.body.access_token, login.body.refresh_token]) {
      if (log.includes(secret)) fail(`${target} wrote a secret to its log`);
    }
    return transcript;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const transcripts: string[][] = [];
for (const target of targets) {
  const t = await run(target);
  transcripts.push(t);
  console.log(`smoke ${target}: ${t.length} requests, stopped cleanly on SIGTERM`);
}
const [first, ...others] = transcripts;
others.forEach((t, i) => {
  t.forEach((line, j) => {
    if (line !== first![j]) fail(`${targets[i + 1]} answered differently from ${targets[0]}:\n  ${first![j]}\n  ${line}`);
  });
});
console.log(first!.map((l) => `  ${l}`).join("\n"));
if (targets.length > 1) console.log(`smoke: ${targets.join(" and ")} answered the same`);
