import { afterAll, describe, expect, test } from "bun:test";
import { requestPath } from "../../src/http/request-path";
import { testApp } from "../helpers";
import { JSON_TYPE, expectError } from "./support";

/** Issue 13, item 1: no per-request hook can throw past its request. */

describe("requestPath reads a request's path as text, whatever Bun hands over", () => {
  const cases: Array<[string, string]> = [
    ["http://localhost/api/v1/health", "/api/v1/health"],
    ["http://localhost:8000/api/v1/health?token=x", "/api/v1/health"],
    // No usable Host: Bun gives the bare request target, which `new URL` refuses.
    ["/api/v1/health", "/api/v1/health"],
    ["/api/v1/health?x=1#y", "/api/v1/health"],
    ["http://[::1]:8000/a/b#frag", "/a/b"],
    ["http://x:99999999/p", "/p"],
    ["http://localhost", "/"],
    ["*", "*"],
    ["", "/"],
    ["?only=query", "/"],
    // A bare target without its leading slash (the HTTP fuzz, seed 2072572050).
    ["api/v1/health", "/api/v1/health"],
    ["\\api\\v1\\health", "/\\api\\v1\\health"],
  ];
  for (const [url, path] of cases) test(`${JSON.stringify(url)} → ${path}`, () => expect(requestPath(url)).toBe(path));
});

describe("a hook that fails is logged with the request id, and the server goes on", () => {
  const t = testApp();
  afterAll(() => t.close());
  const errorsLogged = () => t.logs.filter((l) => l.level === "error");

  test("the durability wait failing: the write is answered 500 (never told it is done), logged with its id", async () => {
    const durable = t.ctx.durable;
    t.ctx.durable = async () => {
      throw new Error("fdatasync: EIO");
    };
    try {
      const before = errorsLogged().length;
      const r = await t.json("POST", "/api/v1/auth/signup", {
        body: { email: "a@hooks.test", password: "correct horse battery", tenant_name: "Hooks", subdomain: "hooks" },
      });
      expectError(r, 500, "internal_error");
      const lines = errorsLogged().slice(before);
      expect(lines.length).toBeGreaterThanOrEqual(1);
      expect(lines[0]).toMatchObject({ msg: "durability wait failed", request_id: r.headers.get("x-request-id"), message: "fdatasync: EIO" });
      // A read does not wait, and is answered as usual.
      expect((await t.json("GET", "/api/v1/health")).status).toBe(200);
    } finally {
      t.ctx.durable = durable;
    }
    expect((await t.json("GET", "/api/v1/health")).status).toBe(200);
  });

  test("the error handler itself failing: a plain 500, logged with the request id", async () => {
    const authenticate = t.ctx.auth.authenticate;
    // A thrown error whose name cannot be read: reporting it fails inside the error handler.
    const poisoned = new Error("poisoned");
    Object.defineProperty(poisoned, "name", {
      get() {
        throw new Error("name unreadable");
      },
    });
    t.ctx.auth.authenticate = async () => {
      throw poisoned;
    };
    try {
      const before = errorsLogged().length;
      const r = await t.json("GET", "/api/v1/auth/me", { token: "a.b.c" });
      expectError(r, 500, "internal_error");
      const lines = errorsLogged().slice(before);
      expect(lines).toContainEqual(expect.objectContaining({ msg: "error handler failed", request_id: r.headers.get("x-request-id"), message: "name unreadable" }));
    } finally {
      t.ctx.auth.authenticate = authenticate;
    }
    expect((await t.json("GET", "/api/v1/health")).status).toBe(200);
  });

  test("a logger that throws takes no request with it", async () => {
    const throwing = testApp();
    const log = throwing.ctx.log;
    try {
      // The hooks call ctx.log at request time.
      (throwing.ctx as { log: unknown }).log = () => {
        throw new Error("stdout closed");
      };
      const r = await throwing.json("POST", "/api/v1/auth/login", { raw: "{oops", headers: JSON_TYPE });
      expect(r.status).toBe(422);
      expect((await throwing.json("GET", "/api/v1/health")).status).toBe(200);
    } finally {
      (throwing.ctx as { log: unknown }).log = log;
      throwing.close();
    }
  });
});
