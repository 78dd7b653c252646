import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { registerDom, fakeFetch, json } from "./dom";

registerDom();
const { api, refreshSession, setSignedOutHandler, stopRefresh } = await import("../../../web/api/client");

/**
 * Every answer the client gets must have its body read or cancelled: an unread body keeps the
 * request open in a browser, holds one of its few connections to the host and keeps the page from
 * ever being network-idle. The fake server's answers are kept here and checked after each call.
 */
const answers: Response[] = [];
const kept = (make: () => Response) => () => {
  const r = make();
  answers.push(r);
  return r;
};
const unread = () => answers.filter((r) => r.body !== null && !r.bodyUsed).map((r) => r.status);

beforeEach(() => {
  answers.length = 0;
  setSignedOutHandler(() => {});
});
afterEach(() => stopRefresh());

describe("the API client reads or cancels every answer's body", () => {
  test("a refresh the server refuses (401 with a JSON body)", async () => {
    const f = fakeFetch({ "POST /api/v1/auth/refresh": kept(() => json(401, { detail: "Session revoked.", code: "session_revoked" })) });
    try {
      expect(await refreshSession()).toBe(false);
      expect(answers.length).toBe(1);
      expect(unread()).toEqual([]);
    } finally {
      f.restore();
    }
  });

  test("a refresh that works (200 with the new tokens, which the cookies already carry)", async () => {
    const f = fakeFetch({ "POST /api/v1/auth/refresh": kept(() => json(200, { access_token: "a", refresh_token: "r", token_type: "bearer" })) });
    try {
      expect(await refreshSession()).toBe(true);
      expect(unread()).toEqual([]);
    } finally {
      f.restore();
    }
  });

  test("a refresh answered by a proxy's error page (502, not JSON)", async () => {
    const f = fakeFetch({ "POST /api/v1/auth/refresh": kept(() => new Response("<html>bad gateway</html>", { status: 502 })) });
    try {
      expect(await refreshSession()).toBe(false);
      expect(unread()).toEqual([]);
    } finally {
      f.restore();
    }
  });

  test("an expired token: the 401, the failed refresh and the sign-out leave nothing unread", async () => {
    const f = fakeFetch({
      "GET /api/v1/auth/sessions": kept(() => json(401, { detail: "Token expired.", code: "token_expired" })),
      "POST /api/v1/auth/refresh": kept(() => json(401, { detail: "Session revoked.", code: "session_revoked" })),
    });
    try {
      await api.get("/api/v1/auth/sessions").catch(() => {});
      expect(answers.length).toBe(2);
      expect(unread()).toEqual([]);
    } finally {
      f.restore();
    }
  });

  test("a 204 with a body (which some proxies send), a 200 and an error", async () => {
    const f = fakeFetch({
      "DELETE /api/v1/crm/deals/d1": kept(() => new Response("", { status: 204 })),
      "GET /api/v1/crm/deals/d2": kept(() => json(200, { id: "d2" })),
      "GET /api/v1/crm/deals/d3": kept(() => new Response("oops", { status: 500 })),
    });
    try {
      await api.delete("/api/v1/crm/deals/{id}", { path: { id: "d1" } });
      await api.get("/api/v1/crm/deals/{id}", { path: { id: "d2" } });
      await api.get("/api/v1/crm/deals/{id}", { path: { id: "d3" } }).catch(() => {});
      expect(answers.length).toBe(3);
      expect(unread()).toEqual([]);
    } finally {
      f.restore();
    }
  });
});
