import { afterAll, describe, expect, spyOn, test } from "bun:test";
import { stdoutLogger } from "../../src/kernel/logger";
import { type RequestOptions, setCookies, testApp } from "../helpers";
import { JSON_TYPE, accessLines } from "./support";
import { closeDatabase } from "../support/backend";

const t = testApp();
afterAll(() => t.close());

/** Sends one request and answers it with the access-log lines it added. */
async function logged(method: string, path: string, o: RequestOptions = {}) {
  const before = t.logs.length;
  const r = await t.json(method, path, o);
  const added = t.logs.slice(before).filter((l) => l.msg === "request");
  return { r, added };
}

describe("one access-log line per request", () => {
  const cases: Array<[string, string, RequestOptions, number]> = [
    ["GET", "/api/v1/health", {}, 200],
    ["GET", "/nowhere", {}, 404],
    ["POST", "/api/v1/auth/login", { body: {} }, 422],
    ["POST", "/api/v1/auth/login", { raw: "{oops", headers: JSON_TYPE }, 422],
    ["POST", "/api/v1/auth/login", { raw: "a=b", headers: { "content-type": "text/plain" } }, 415],
    ["POST", "/api/v1/auth/login", { raw: "x".repeat(1024 * 1024 + 1), headers: JSON_TYPE }, 413],
    ["GET", "/api/v1/auth/me", {}, 401],
    ["POST", "/api/v1/auth/login", { body: { email: "nobody@logs.test", password: "wrong password" } }, 401],
  ];
  for (const [method, path, o, status] of cases) {
    test(`${method} ${path} → ${status}`, async () => {
      const { r, added } = await logged(method, path, o);
      expect(r.status).toBe(status);
      expect(added).toEqual([
        {
          level: "info",
          msg: "request",
          method,
          path,
          status,
          duration_ms: expect.any(Number),
          request_id: r.headers.get("x-request-id"),
          // The answer's traceparent carries the same trace id (tests/metrics/metrics.test.ts).
          trace_id: r.headers.get("traceparent")!.split("-")[1],
        },
      ]);
      expect(added[0]!.duration_ms as number).toBeGreaterThanOrEqual(0);
    });
  }

  test("the path is logged without its query string", async () => {
    const { r, added } = await logged("GET", "/api/v1/health?token=abc123secret&email=a%40b.co");
    expect(r.status).toBe(200);
    expect(added).toHaveLength(1);
    expect(added[0]!.path).toBe("/api/v1/health");
    expect(JSON.stringify(t.logs)).not.toContain("abc123secret");
  });

  test("the request id of the line is the one answered (and one given by the caller is kept)", async () => {
    const { r, added } = await logged("GET", "/api/v1/health", { headers: { "x-request-id": "trace-0001" } });
    expect(r.headers.get("x-request-id")).toBe("trace-0001");
    expect(added[0]!.request_id).toBe("trace-0001");
  });

  test("a 500 adds one error line and still exactly one access line", async () => {
    const broken = testApp();
    await closeDatabase(broken.ctx);
    const r = await broken.json("POST", "/api/v1/auth/signup", { body: { email: "x@y.test", password: "long enough pw", tenant_name: "X", subdomain: "xyz" } });
    expect(r.status).toBe(500);
    expect(broken.logs.map((l) => [l.level, l.msg])).toEqual([
      ["error", "unhandled error"],
      ["info", "request"],
    ]);
    expect(accessLines(broken)[0]).toMatchObject({ status: 500, request_id: r.headers.get("x-request-id") });
  });

  test("every line is plain JSON", () => {
    for (const line of t.logs) expect(JSON.parse(JSON.stringify(line))).toEqual(line);
  });

  test("the production logger writes one JSON object per line, with a time", () => {
    const spy = spyOn(process.stdout, "write").mockImplementation(() => true);
    let calls: unknown[][];
    try {
      stdoutLogger({ level: "info", msg: "request", path: "/a\nb" });
      calls = [...spy.mock.calls];
    } finally {
      spy.mockRestore();
    }
    expect(calls).toHaveLength(1);
    const out = String(calls[0]![0]);
    expect(out.endsWith("\n")).toBe(true);
    expect(out.slice(0, -1)).not.toContain("\n");
    expect(JSON.parse(out)).toEqual({ time: expect.any(String), level: "info", msg: "request", path: "/a\nb" });
  });
});

describe("no secret in any log line", () => {
  test("a full flow leaves no password, token or cookie value in the logs", async () => {
    const secrets = new Set<string>();
    const keep = (...values: Array<string | undefined>) => {
      for (const v of values) {
        if (!v) continue;
        secrets.add(v);
        const parts = v.split(".");
        if (parts.length === 3) secrets.add(parts[2]!); // the JWT's signature alone
      }
    };
    const keepCookies = (res: Response) => {
      for (const c of Object.values(setCookies(res))) keep(c.value);
    };
    const password = "Tr0ub4dor&3-log-secret";
    const wrong = "wrong-Pa55word-log-secret";
    keep(password, wrong);
    const origin = { ...JSON_TYPE, origin: "http://flow.localhost:8000" };
    const body = async (res: Response) => (await res.json()) as Record<string, any>;

    const signup = await t.request("POST", "/api/v1/auth/signup", {
      body: { email: "owner@flow.test", password, tenant_name: "Flow", subdomain: "flow" },
    });
    expect(signup.status).toBe(201);
    keepCookies(signup);
    const created = await body(signup);
    keep(created.access_token, created.refresh_token);

    const login = await t.request("POST", "/api/v1/auth/login", { body: { email: "owner@flow.test", password }, tenant: "flow" });
    expect(login.status).toBe(200);
    keepCookies(login);
    const cookies = setCookies(login);
    const pair = await body(login);
    keep(pair.access_token, pair.refresh_token);

    const rotated = await t.request("POST", "/api/v1/auth/refresh", { body: { refresh_token: pair.refresh_token } });
    expect(rotated.status).toBe(200);
    keepCookies(rotated);
    const pair2 = await body(rotated);
    keep(pair2.access_token, pair2.refresh_token);

    const viaCookie = await t.request("POST", "/api/v1/auth/refresh", { cookies: { svc_refresh: cookies.svc_refresh!.value }, tenant: "flow", headers: origin });
    expect(viaCookie.status).toBe(200);
    keepCookies(viaCookie);
    const pair3 = await body(viaCookie);
    keep(pair3.access_token, pair3.refresh_token);

    // A tampered refresh token fails, and the failure does not log what was presented.
    expect((await t.json("POST", "/api/v1/auth/refresh", { body: { refresh_token: created.refresh_token + "x" } })).status).toBe(401);

    expect((await t.json("GET", "/api/v1/auth/sessions", { token: pair2.access_token, tenant: "flow" })).status).toBe(200);
    expect((await t.json("GET", "/api/v1/auth/sessions", { cookies: { svc_session: pair3.access_token } })).status).toBe(200);
    expect((await t.json("GET", `/api/v1/auth/me?access_token=${pair2.access_token}`, { token: pair2.access_token })).status).toBe(200);
    expect((await t.json("POST", "/api/v1/auth/sessions/revoke-others", { cookies: { svc_session: pair3.access_token }, tenant: "flow", headers: origin })).status).toBe(200);

    expect((await t.json("POST", "/api/v1/auth/login", { body: { email: "owner@flow.test", password: wrong }, tenant: "flow" })).status).toBe(401);
    expect((await t.json("POST", "/api/v1/auth/login", { body: { email: "ghost@flow.test", password: wrong } })).status).toBe(401);
    expect((await t.json("POST", "/api/v1/auth/login", { raw: `{"email":"owner@flow.test","password":${wrong}}`, headers: JSON_TYPE })).status).toBe(422);
    expect((await t.json("POST", "/api/v1/auth/signup", { body: { email: "bad", password: wrong, tenant_name: "", subdomain: "-" } })).status).toBe(422);
    expect((await t.json("GET", "/api/v1/auth/me", { token: pair2.access_token + "tampered" })).status).toBe(401);

    const logoutAll = await t.request("POST", "/api/v1/auth/logout-all", { token: pair3.access_token, tenant: "flow" });
    expect(logoutAll.status).toBe(200);
    expect((await t.json("GET", "/api/v1/auth/me", { token: pair3.access_token })).status).toBe(401);

    expect(secrets.size).toBeGreaterThanOrEqual(10);
    const flowLines = t.logs.map((l) => JSON.stringify(l));
    expect(flowLines.length).toBeGreaterThan(15);
    for (const line of flowLines) {
      for (const secret of secrets) expect(line).not.toContain(secret);
      expect(line).not.toMatch(/eyJ[\w-]{10,}/); // no JWT of any kind
      expect(line.toLowerCase()).not.toContain("svc_session=");
      expect(line.toLowerCase()).not.toContain("svc_refresh=");
    }
  });
});
