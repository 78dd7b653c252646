import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { registerDom, fakeFetch, json } from "./dom";

registerDom();
const { ApiError, api, setSignedOutHandler, stopRefresh } = await import("../../../web/api/client");
const { errorMessage } = await import("../../../web/shared/states");

let signedOut = 0;
beforeEach(() => {
  signedOut = 0;
  setSignedOutHandler(() => void signedOut++);
});
afterEach(() => stopRefresh());

describe("the API client", () => {
  test("a body-less POST sends {} as JSON, with the cookies of this origin only", async () => {
    const f = fakeFetch({ "POST /api/v1/auth/sessions/revoke-others": () => json(200, { detail: "ok", revoked: 2 }) });
    try {
      expect((await api.post("/api/v1/auth/sessions/revoke-others")).revoked).toBe(2);
      expect(f.calls[0]!.body).toEqual({});
      expect(f.calls[0]!.headers["content-type"]).toBe("application/json");
      expect(f.calls[0]!.credentials).toBe("same-origin");
      expect(f.calls[0]!.headers.authorization).toBeUndefined();
    } finally {
      f.restore();
    }
  });

  test("an expired access token: concurrent calls share ONE refresh, then each is retried", async () => {
    let fresh = false;
    const f = fakeFetch({
      "GET /api/v1/auth/sessions": () => (fresh ? json(200, []) : json(401, { detail: "Token expired.", code: "token_expired" })),
      "POST /api/v1/auth/refresh": async () => {
        await new Promise((r) => setTimeout(r, 20));
        fresh = true;
        return json(200, { access_token: "a", refresh_token: "r", token_type: "bearer" });
      },
    });
    try {
      const answers = await Promise.all([api.get("/api/v1/auth/sessions"), api.get("/api/v1/auth/sessions"), api.get("/api/v1/auth/sessions")]);
      expect(answers).toEqual([[], [], []]);
      expect(f.calls.filter((c) => c.path === "/api/v1/auth/refresh").length).toBe(1);
      expect(f.calls.find((c) => c.path === "/api/v1/auth/refresh")!.body).toEqual({});
      expect(signedOut).toBe(0);
    } finally {
      f.restore();
    }
  });

  test("a refresh that fails sends the user to sign-in, once per call", async () => {
    const f = fakeFetch({
      "GET /api/v1/auth/sessions": () => json(401, { detail: "Not authenticated.", code: "not_authenticated" }),
      "POST /api/v1/auth/refresh": () => json(401, { detail: "Session revoked.", code: "session_revoked" }),
    });
    try {
      const e = await api.get("/api/v1/auth/sessions").catch((x) => x);
      expect(e).toBeInstanceOf(ApiError);
      expect(e.code).toBe("not_authenticated");
      expect(signedOut).toBe(1);
    } finally {
      f.restore();
    }
  });

  test("a revoked session is signed out at once, without a refresh", async () => {
    const f = fakeFetch({ "GET /api/v1/auth/me": () => json(401, { detail: "Session revoked.", code: "session_revoked" }) });
    try {
      await api.get("/api/v1/auth/me").catch(() => {});
      expect(signedOut).toBe(1);
      expect(f.calls.map((c) => c.path)).toEqual(["/api/v1/auth/me"]);
    } finally {
      f.restore();
    }
  });

  test("other 401s (a wrong code) are the action's answer: no refresh, no sign-out", async () => {
    const f = fakeFetch({ "POST /api/v1/auth/2fa/confirm": () => json(401, { detail: "Invalid code.", code: "invalid_2fa_code" }) });
    try {
      const e = await api.post("/api/v1/auth/2fa/confirm", { body: { code: "123456" } }).catch((x) => x);
      expect(e.code).toBe("invalid_2fa_code");
      expect(signedOut).toBe(0);
      expect(f.calls.length).toBe(1);
    } finally {
      f.restore();
    }
  });

  test("a 422 keeps its items, found by field; a 429 says how long to wait", async () => {
    const f = fakeFetch({
      "POST /api/v1/crm/deals": () => json(422, { detail: [{ loc: ["body", "title"], msg: "Field required", type: "missing" }] }),
      "POST /api/v1/auth/login": () => json(429, { detail: "Too many attempts.", code: "rate_limited" }, { "retry-after": "90" }),
    });
    try {
      const e = await api.create("/api/v1/crm/deals", { body: { account_id: "x" } as never }).catch((x) => x);
      expect(e.status).toBe(422);
      expect(e.fieldError("title")).toBe("Enter a title."); // the item as a sentence for a person (api/messages.ts)
      expect(e.fieldError("value")).toBeUndefined();
      const r = await api.post("/api/v1/auth/login", { body: { email: "a@b.co", password: "x" } }).catch((x) => x);
      expect(r.retryAfter).toBe(90);
      expect(errorMessage(r)).toBe("Too many attempts. Try again in 2 minutes.");
    } finally {
      f.restore();
    }
  });

  test("a create carries its submission's Idempotency-Key, waits out 'in progress' with the same key, and turns 'reused' into a sentence", async () => {
    let n = 0;
    const f = fakeFetch({
      "POST /api/v1/crm/accounts": () =>
        ++n === 1 ? json(409, { detail: "Still being processed.", code: "idempotency_key_in_progress" }, { "retry-after": "1" }) : json(201, { id: "a1", name: "Acme" }),
      "POST /api/v1/crm/contacts": () => json(409, { detail: "Used for a different request.", code: "idempotency_key_reused" }),
      "POST /api/v1/crm/pipeline-stages/reorder": () => json(200, []),
    });
    try {
      expect((await api.create("/api/v1/crm/accounts", { body: { name: "Acme" } })).id).toBe("a1");
      expect(f.calls.length).toBe(2);
      expect(f.calls[0]!.headers["idempotency-key"]).toMatch(/^[0-9a-f]{32}$/);
      expect(f.calls[1]!.headers["idempotency-key"]).toBe(f.calls[0]!.headers["idempotency-key"]);
      // After that success the next create of the same values is a new submission.
      await api.create("/api/v1/crm/accounts", { body: { name: "Acme" } });
      expect(f.calls[2]!.headers["idempotency-key"]).not.toBe(f.calls[0]!.headers["idempotency-key"]);
      const e = await api.create("/api/v1/crm/contacts", { body: { first_name: "Ada" } }).catch((x) => x);
      expect([e.status, e.code]).toEqual([409, "idempotency_key_reused"]);
      expect(errorMessage(e)).toStartWith("This form was already sent with other values.");
      // A POST that creates nothing carries no key.
      await api.post("/api/v1/crm/pipeline-stages/reorder", { body: { ids: ["s1"] } });
      expect(f.calls.at(-1)!.headers["idempotency-key"]).toBeUndefined();
    } finally {
      f.restore();
    }
  });

  test("list filters become a query string: arrays repeat, empty values are left out", async () => {
    const f = fakeFetch({ "GET /api/v1/crm/deals": () => json(200, { items: [], total: 0, page: 1, size: 20, pages: 0 }) });
    try {
      await api.get("/api/v1/crm/deals", { query: { page: 2, search: "", stage: ["new", "won"], mine: "true", unassigned: undefined, sort_by: "value", sort_dir: "desc" } });
      expect(f.calls[0]!.path).toBe("/api/v1/crm/deals?page=2&stage=new&stage=won&mine=true&sort_by=value&sort_dir=desc");
    } finally {
      f.restore();
    }
  });
});
