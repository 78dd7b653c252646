import { afterAll, describe, expect, test } from "bun:test";
import { type TestApp, testApp } from "../helpers";
import { crmOrg } from "../crm/support";
import { ON_POSTGRES } from "../support/backend";

const TOKEN = "metrics-token-metrics-token-0123456789";
const apps: TestApp[] = [];
const app = (env: Record<string, string> = { SUITE_METRICS_TOKEN: TOKEN }, limits?: NonNullable<Parameters<typeof testApp>[0]>["limits"]) => {
  const t = testApp({ env, limits });
  apps.push(t);
  return t;
};
afterAll(async () => {
  for (const t of apps) await t.close();
});

const scrape = async (t: TestApp, token = TOKEN) => {
  const res = await t.request("GET", "/api/v1/metrics", { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
};
/** The value of one sample line, by its exact name and labels as Prometheus prints them. */
const sample = (text: string, series: string) => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe("GET /api/v1/metrics", () => {
  test("is off (404) without SUITE_METRICS_TOKEN", async () => {
    const t = app({});
    const r = await t.json("GET", "/api/v1/metrics");
    expect(r.status).toBe(404);
    expect(r.body.code).toBe("not_found");
  });

  test("needs the operator's token: none, a wrong one or an organization's access token is 401", async () => {
    const t = app();
    const org = await t.signup();
    for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Bearer ${org.access_token}`, `Basic ${btoa(`x:${TOKEN}`)}`]) {
      const res = await t.request("GET", "/api/v1/metrics", { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain("Bearer");
      const body = (await res.json()) as { code: string };
      expect(body.code).toBe("not_authenticated");
    }
    const ok = await scrape(t);
    expect(ok.status).toBe(200);
    expect(ok.type).toContain("text/plain");
  });

  test("counts requests by route template, sign-ins by result and rate-limit refusals", async () => {
    const t = app({ SUITE_METRICS_TOKEN: TOKEN }, { loginPerIp: { name: "login-ip", max: 2, windowMs: 60_000 } });
    const org = await t.signup("metricsorg");
    await t.json("POST", "/api/v1/auth/login", { body: { email: org.email, password: org.password }, tenant: org.subdomain });
    await t.json("POST", "/api/v1/auth/login", { body: { email: org.email, password: "wrong password here" }, tenant: org.subdomain });
    const limited = await t.json("POST", "/api/v1/auth/login", { body: { email: org.email, password: org.password }, tenant: org.subdomain });
    expect(limited.status).toBe(429);
    const made = await t.json("POST", "/api/v1/crm/accounts", { token: org.access_token, body: { name: "Globex Metrics" } });
    expect(made.status).toBe(201);
    const one = made.body.id as string;
    expect((await t.json("GET", `/api/v1/crm/accounts/${one}`, { token: org.access_token })).status).toBe(200);

    const { text } = await scrape(t);
    expect(sample(text, 'suite_sign_ins_total{method="password",result="success"}')).toBe(1);
    expect(sample(text, 'suite_sign_ins_total{method="password",result="failure"}')).toBe(1);
    expect(sample(text, 'suite_sign_ins_total{method="password",result="limited"}')).toBe(1);
    expect(sample(text, 'suite_rate_limit_refusals_total{limit="login-ip"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'suite_http_requests_total{route="/api/v1/auth/login",method="POST",status_class="4xx"}')).toBe(2);
    expect(sample(text, 'suite_http_requests_total{route="/api/v1/crm/accounts/:id",method="GET",status_class="2xx"}')).toBe(1);
    expect(sample(text, 'suite_http_request_duration_seconds_count{route="/api/v1/auth/login",method="POST"}')).toBe(3);
    expect(sample(text, 'suite_http_request_duration_seconds_bucket{le="+Inf",route="/api/v1/auth/login",method="POST"}')).toBe(3);
    // Labels are route templates and fixed words: no organization, address, id or token in them.
    for (const leak of [org.subdomain, org.email, org.tenant.id, org.user.id, one, "Globex", org.access_token]) expect(text).not.toContain(leak);
  });

  test("shows the mail backlog, the event loop, the process and the build", async () => {
    const t = app();
    const org = await t.signup();
    // Signup mails a verification link: one pending mail (no SMTP sender in tests).
    expect(org.user.id).toBeTruthy();
    const { text } = await scrape(t);
    expect(sample(text, 'suite_mail_outbox{status="pending"}')).toBe(1);
    expect(sample(text, 'suite_mail_outbox{status="failed"}')).toBe(0);
    expect(sample(text, "suite_mail_oldest_pending_seconds")).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'suite_event_loop_delay_seconds{quantile="1"}')).toBeGreaterThanOrEqual(0);
    // A thread held 120 ms shows in the next scrape, read from the same timer as the stall warnings.
    await Bun.sleep(50);
    Bun.sleepSync(120);
    await Bun.sleep(30);
    const held = await scrape(t);
    expect(sample(held.text, 'suite_event_loop_delay_seconds{quantile="1"}')).toBeGreaterThanOrEqual(0.09);
    expect(sample(held.text, 'suite_event_loop_delay_seconds{quantile="0.99"}')).toBeGreaterThanOrEqual(0);
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(1e6);
    expect(sample(text, 'process_cpu_seconds_total{mode="user"}')).toBeGreaterThan(0);
    expect(sample(text, "process_open_fds")).toBeGreaterThan(0);
    const version = ((await import("../../package.json")).default as { version: string }).version;
    expect(sample(text, `suite_build_info{version="${version}"}`)).toBe(1);
  });
});

describe("jobs and the database pool", () => {
  test("running jobs are counted by kind from the store, ended ones by kind and status in this process", async () => {
    const t = app();
    const org = await crmOrg(t, "metricsjobs");
    const before = await scrape(t);
    expect(sample(before.text, 'suite_jobs_running{kind="deals"}')).toBeUndefined();
    // A job another server left running (as after kill -9): counted while it runs, wherever it runs.
    await t.ctx.repos.jobs.create({
      tenant_id: org.tenant.id, id: "job_metrics_running", kind: "deals", status: "running", user_id: null, total: 1, done: 0,
      added: 0, updated: 0, unchanged: 0, error_count: 0, errors: "[]", message: null, created_at: Date.now(), finished_at: null, lease_until: Date.now() - 1,
    });
    expect(sample((await scrape(t)).text, 'suite_jobs_running{kind="deals"}')).toBe(1);
    // Recovery rolls it back: failed, counted as ended here; then an import that succeeds.
    expect(await t.ctx.jobs.recover(Date.now())).toBe(1);
    const res = await t.app.handle(
      new Request("http://localhost/api/v1/crm/accounts/import", { method: "POST", headers: { authorization: `Bearer ${org.token}`, "content-type": "text/csv" }, body: "name\nGlobex\n" }),
    );
    expect(res.status).toBe(202);
    await t.ctx.jobs.settled();
    const { text } = await scrape(t);
    expect(sample(text, 'suite_jobs_running{kind="deals"}')).toBeUndefined();
    expect(sample(text, 'suite_jobs_finished_total{kind="deals",status="failed"}')).toBe(1);
    expect(sample(text, 'suite_jobs_finished_total{kind="accounts",status="succeeded"}')).toBe(1);
  });

  test("webhook deliveries waiting and failing are counted in every organization", async () => {
    const t = app({ SUITE_METRICS_TOKEN: TOKEN, SUITE_OUTBOUND_ALLOW: "127.0.0.1", SUITE_WEBHOOK_HTTP: "true" });
    const org = await crmOrg(t, "metricshooks");
    const zero = (await scrape(t)).text;
    expect([sample(zero, 'suite_webhook_deliveries{status="pending"}'), sample(zero, 'suite_webhook_deliveries{status="failing"}')]).toEqual([0, 0]);
    // Nothing listens on port 9 of loopback: no sender runs here, so the deliveries wait.
    const made = await t.json("POST", "/api/v1/webhooks", { token: org.token, body: { url: "http://127.0.0.1:9/", events: ["*"] } });
    expect(made.status).toBe(201);
    await org.account("Hooked");
    await org.account("Hooked too");
    const waiting = (await scrape(t)).text;
    expect([sample(waiting, 'suite_webhook_deliveries{status="pending"}'), sample(waiting, 'suite_webhook_deliveries{status="failing"}')]).toEqual([2, 0]);
    // One attempt fails (connection refused): still pending, now failing too.
    const [d] = await t.ctx.repos.webhooks.lease(Date.now(), Date.now() + 60_000, 1, () => true);
    await t.ctx.repos.webhooks.finish(d!.tenant_id, d!.id, d!.attempts, { kind: "retry", next: Date.now() + 60_000 }, { status: null, durationMs: 1, error: "unreachable" }, Date.now());
    const failing = (await scrape(t)).text;
    expect([sample(failing, 'suite_webhook_deliveries{status="pending"}'), sample(failing, 'suite_webhook_deliveries{status="failing"}')]).toEqual([2, 1]);
  });

  test.if(ON_POSTGRES)("on PostgreSQL the pool's size and use are shown", async () => {
    const t = app();
    await t.signup();
    const { text } = await scrape(t);
    expect(sample(text, "suite_pg_pool_max")).toBe(3);
    // The scrape's own gauges read the database while it runs; between requests nothing holds a connection.
    expect(sample(text, "suite_pg_pool_in_use")).toBeGreaterThanOrEqual(0);
    expect(t.ctx.pg!.pool().inFlight).toBe(0);
    const held = t.ctx.pg!.begin(async (tx) => {
      expect(t.ctx.pg!.pool().inFlight).toBe(1);
      await tx.one`SELECT 1 AS one`;
    });
    await held;
    expect(t.ctx.pg!.pool().inFlight).toBe(0);
  });

  test.if(!ON_POSTGRES)("on SQLite there is no pool to show", async () => {
    const t = app();
    expect(sample((await scrape(t)).text, "suite_pg_pool_max")).toBeUndefined();
  });
});

describe("trace context", () => {
  test("a caller's traceparent is continued: its trace id in the answer and in the request's log line", async () => {
    const t = app({});
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const res = await t.request("GET", "/api/v1/health", { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
    const answer = res.headers.get("traceparent")!;
    expect(answer).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    expect(answer.split("-")[2]).not.toBe("00f067aa0ba902b7");
    const line = t.logs.find((l) => l.msg === "request" && l.request_id === res.headers.get("x-request-id"));
    expect(line?.trace_id).toBe(traceId);
  });

  test("without one (or with a malformed or all-zero one) a new trace starts", async () => {
    const t = app({});
    const seen = new Set<string>();
    for (const given of [undefined, "garbage", `00-${"0".repeat(32)}-00f067aa0ba902b7-01`, "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"]) {
      const res = await t.request("GET", "/api/v1/health", { headers: given ? { traceparent: given } : {} });
      const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-00$/.exec(res.headers.get("traceparent") ?? "");
      expect(m).not.toBeNull();
      expect(m![1]).not.toBe("0".repeat(32));
      seen.add(m![1]!);
      const line = t.logs.find((l) => l.msg === "request" && l.request_id === res.headers.get("x-request-id"));
      expect(line?.trace_id).toBe(m![1]);
    }
    expect(seen.size).toBe(4);
  });
});
