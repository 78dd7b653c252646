import { describe, expect, test } from "bun:test";
import { createRequestRate } from "../../src/operator/request-rate";

/** Issue 34: the overview's 24 hours, per instance in memory: requests per minute, and per hour p99, 5xx, sign-ins and failures. */

const H = 3_600_000;

describe("the overview's hourly figures", () => {
  test("each hour counts its requests, 5xx answers, sign-in steps passed and refused, and its p99 bucket", () => {
    const clock = { t: Date.UTC(2026, 10, 27, 9, 10) };
    const r = createRequestRate(() => clock.t);
    for (let i = 0; i < 98; i++) r.add(200, 0.004, "/api/v1/crm/deals", "GET");
    r.add(500, 0.04, "/api/v1/crm/deals", "POST");
    r.add(503, 0.9, "/api/v1/crm/deals", "GET");
    r.add(200, 0.002, "/api/v1/auth/login", "POST");
    r.add(401, 0.002, "/api/v1/auth/login", "POST");
    r.add(401, 0.002, "/api/v1/auth/2fa/verify", "POST");
    r.add(429, 0.001, "/api/v1/auth/login", "POST");
    // A GET of a sign-in route is no sign-in.
    r.add(200, 0.001, "/api/v1/auth/login", "GET");
    clock.t += H;
    r.add(200, 12, "/api/v1/crm/deals", "GET");
    const hours = r.hours();
    expect(hours).toHaveLength(24);
    expect(hours.at(-1)).toEqual({ start: Date.UTC(2026, 10, 27, 10), requests: 1, errors: 0, p99_ms: 10000, sign_ins: 0, sign_in_failures: 0 });
    // 105 requests: the 104th slowest is the 50 ms bucket (the 40 ms error); the 900 ms one is the 1 %.
    expect(hours.at(-2)).toEqual({ start: Date.UTC(2026, 10, 27, 9), requests: 105, errors: 2, p99_ms: 50, sign_ins: 1, sign_in_failures: 2 });
    expect(hours.at(0)).toMatchObject({ start: Date.UTC(2026, 10, 26, 11), requests: 0, p99_ms: null });
    expect(r.series().reduce((a, b) => a + b, 0)).toBe(106);
  });

  test("hours older than a day are forgotten, also after a long silence", () => {
    const clock = { t: Date.UTC(2026, 10, 27, 9) };
    const r = createRequestRate(() => clock.t);
    r.add(500, 0.01);
    clock.t += 23 * H;
    expect(r.hours()[0]).toMatchObject({ requests: 1, errors: 1 });
    clock.t += H;
    expect(r.hours().every((h) => h.requests === 0)).toBe(true);
    clock.t += 100 * H;
    r.add(200, 0.001);
    expect(r.hours().map((h) => h.requests).reduce((a, b) => a + b, 0)).toBe(1);
  });

  test("recording costs well under 2 µs", () => {
    const r = createRequestRate(() => Date.now());
    for (let i = 0; i < 10_000; i++) r.add(200, 0.003, "/api/v1/crm/deals", "GET");
    const n = 200_000;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) r.add(200, 0.003, "/api/v1/crm/deals", "GET");
    const us = ((performance.now() - t0) * 1000) / n;
    expect(us).toBeLessThan(2);
  });
});
