import { expect, test } from "bun:test";
import { fromLocalInput, logParams, logQuery, parseLogView, toLocalInput } from "../../../web/security-log/view";

test("the security log's URL and view round-trip; defaults stay out of the URL", () => {
  const q = new URLSearchParams("user_id=u1&action=login.failure&action=tenant.signup&action=login.failure&since=2030-01-01T00:00:00.000Z&page=3&size=50");
  const v = parseLogView(q);
  expect(v).toEqual({ userId: "u1", actions: ["login.failure", "tenant.signup"], since: "2030-01-01T00:00:00.000Z", until: "", page: 3, size: 50 });
  expect(logParams(v)).toEqual({ user_id: "u1", action: ["login.failure", "tenant.signup"], since: "2030-01-01T00:00:00.000Z", until: null, page: "3", size: "50" });
  expect(logQuery(v)).toEqual({ user_id: "u1", action: ["login.failure", "tenant.signup"], since: "2030-01-01T00:00:00.000Z", until: undefined, page: 3, size: 50 });
  expect(logParams(parseLogView(new URLSearchParams("")))).toEqual({ user_id: null, action: [], since: null, until: null, page: null, size: null });
});

test("a hand-edited URL never reaches the server as a 422: bad times, pages and sizes fall back", () => {
  expect(parseLogView(new URLSearchParams("since=yesterday&until=2030-13-45&page=0&size=500"))).toMatchObject({ since: "", until: "", page: 1, size: 20 });
});

test("date-time inputs show local time and give UTC back", () => {
  const iso = "2030-06-01T12:34:00.000Z";
  expect(fromLocalInput(toLocalInput(iso))).toBe(iso);
  expect(fromLocalInput("")).toBe("");
  expect(toLocalInput("")).toBe("");
});
