import { afterAll, describe, expect, test } from "bun:test";
import { MAX_BODY_BYTES } from "../../src/http/body";
import { testApp } from "../helpers";
import { JSON_TYPE, REQUEST_ID, accessLines, bytes, chunkedBody, expectError, expect422, listen } from "./support";
import { closeDatabase } from "../support/backend";

const t = testApp();
afterAll(() => t.close());

const LOGIN = "/api/v1/auth/login";

describe("404 not_found", () => {
  const outside = [
    ["GET", "/"],
    ["GET", "/health"],
    ["POST", "/v1/auth/login"],
    ["POST", "/auth/login"],
    ["GET", "/api/health"],
    ["GET", "/api/v2/health"],
    ["GET", "/API/V1/health"],
    ["GET", "/static/index.html"],
  ] as const;
  for (const [method, path] of outside) {
    test(`${method} ${path} (no /api/v1 prefix)`, async () => {
      const r = await t.json(method, path, method === "POST" ? { body: { email: "a@b.co", password: "x" } } : {});
      expectError(r, 404, "not_found");
    });
  }

  const unknown = [
    ["GET", "/api/v1"],
    ["GET", "/api/v1/nope"],
    ["POST", "/api/v1/nope"],
    ["GET", "/api/v1/auth/nope"],
    ["POST", "/api/v1/auth/login/extra"],
    ["DELETE", "/api/v1/crm/nothing/here"],
  ] as const;
  for (const [method, path] of unknown) {
    test(`${method} ${path} (unknown under /api/v1)`, async () => {
      const r = await t.json(method, path, method === "POST" ? { body: {} } : {});
      expectError(r, 404, "not_found");
    });
  }

  test("the body is exactly {detail, code} and is not cached", async () => {
    const r = await t.json("GET", "/nowhere?x=1");
    expect(r.body).toEqual({ detail: "Not found.", code: "not_found" });
    expect(r.headers.get("cache-control")).toBe("no-store");
  });
});

describe("413 payload_too_large", () => {
  test("a body over 1 MiB announced by Content-Length", async () => {
    const r = await t.json("POST", LOGIN, { raw: "x".repeat(MAX_BODY_BYTES + 1), headers: JSON_TYPE });
    expect(r.body).toEqual({ detail: "The request body is larger than 1 MiB.", code: "payload_too_large" });
    expectError(r, 413, "payload_too_large");
  });

  test("a Content-Length over 1 MiB is refused before the body is read, even on an unknown path", async () => {
    const r = await t.json("POST", "/api/v1/nope", { raw: "{}", headers: { ...JSON_TYPE, "content-length": String(MAX_BODY_BYTES + 1) } });
    expectError(r, 413, "payload_too_large");
  });

  test("exactly 1 MiB is not too large (it is then validated)", async () => {
    const head = '{"email":"';
    const tail = '","password":"x"}';
    const raw = head + "a".repeat(MAX_BODY_BYTES - head.length - tail.length) + tail;
    expect(raw.length).toBe(MAX_BODY_BYTES);
    const r = await t.json("POST", LOGIN, { raw, headers: JSON_TYPE });
    expect(r.status).toBe(422);
    expect(r.body.detail.map((i: { loc: unknown }) => i.loc)).toEqual([["body", "email"]]);
  });

  test("a chunked body (no Content-Length) that grows past 1 MiB, on a real socket", async () => {
    const server = listen(t);
    try {
      const chunk = new Uint8Array(64 * 1024).fill(0x20);
      const parts = Array.from({ length: 17 }, () => chunk); // 1 MiB + 64 KiB of JSON whitespace
      const res = await fetch(server.url(LOGIN), { method: "POST", headers: JSON_TYPE, body: chunkedBody(parts) });
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({ detail: "The request body is larger than 1 MiB.", code: "payload_too_large" });
      expect(res.headers.get("x-request-id")).toMatch(REQUEST_ID);
      expect(res.headers.get("content-type")).toStartWith("application/json");
    } finally {
      await server.stop();
    }
  });

  test("a chunked body under the limit is read whole", async () => {
    const server = listen(t);
    try {
      const parts = [bytes('{"email":"nobody@'), bytes('example.com","pass'), bytes('word":"wrong password"}')];
      const res = await fetch(server.url(LOGIN), { method: "POST", headers: JSON_TYPE, body: chunkedBody(parts) });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ detail: "Incorrect email or password.", code: "invalid_credentials" });
    } finally {
      await server.stop();
    }
  });

  test("Content-Length over 1 MiB on a real socket", async () => {
    const server = listen(t);
    try {
      const res = await fetch(server.url(LOGIN), { method: "POST", headers: JSON_TYPE, body: " ".repeat(MAX_BODY_BYTES + 10) });
      expect(res.status).toBe(413);
      expect(((await res.json()) as { code: string }).code).toBe("payload_too_large");
    } finally {
      await server.stop();
    }
  });
});

describe("415 unsupported_media_type", () => {
  const types = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml", "application/jsonp"];
  for (const type of types) {
    test(`a body sent as ${type}`, async () => {
      const r = await t.json("POST", LOGIN, { raw: '{"email":"a@b.co","password":"x"}', headers: { "content-type": type } });
      expect(r.body).toEqual({ detail: "Request bodies must be JSON (Content-Type: application/json).", code: "unsupported_media_type" });
      expectError(r, 415, "unsupported_media_type");
    });
  }

  test("a body with no content type at all", async () => {
    const r = await t.json("POST", LOGIN, { raw: bytes('{"email":"a@b.co","password":"x"}') });
    expectError(r, 415, "unsupported_media_type");
  });

  test("JSON content types with parameters or a +json suffix are JSON", async () => {
    for (const type of ["application/json; charset=utf-8", "Application/JSON", "application/merge-patch+json"]) {
      const r = await t.json("POST", LOGIN, { raw: '{"email":"not-an-email","password":"x"}', headers: { "content-type": type } });
      expect(r.status).toBe(422);
      expect(r.body.detail[0].loc).toEqual(["body", "email"]);
    }
  });

  test("no body and no content type is not a media-type error", async () => {
    const r = await t.json("POST", LOGIN);
    expect422(r, [{ loc: ["body"], msg: "Field required", type: "missing" }]);
  });
});

describe("500 internal_error", () => {
  test("an unexpected failure answers a bare 500, logs the error once, and leaks nothing", async () => {
    const broken = testApp();
    await closeDatabase(broken.ctx);
    const password = "a very secret password";
    const r = await broken.json("POST", "/api/v1/auth/signup", {
      body: { email: "boss@crash.test", password, tenant_name: "Crash", subdomain: "crash" },
    });
    expect(r.body).toEqual({ detail: "Something went wrong on our side.", code: "internal_error" });
    expectError(r, 500, "internal_error");
    const text = JSON.stringify(r.body) + [...r.headers.entries()].join();
    for (const leak of ["closed", "atabase", "sqlite", "SQLite", "RangeError", "stack", " at ", ".ts", "INSERT", "SELECT", password, "crash.test"]) {
      expect(text).not.toContain(leak);
    }

    const id = r.headers.get("x-request-id");
    const errorsLogged = broken.logs.filter((l) => l.level === "error");
    expect(errorsLogged).toHaveLength(1);
    expect(errorsLogged[0]).toMatchObject({ msg: "unhandled error", request_id: id, error: expect.any(String), message: expect.any(String) });
    expect(JSON.stringify(errorsLogged[0])).not.toContain(password);
    expect(accessLines(broken)).toEqual([expect.objectContaining({ path: "/api/v1/auth/signup", status: 500, request_id: id })]);
  });
});

describe("request ids", () => {
  test("every kind of error response carries x-request-id, each a different one", async () => {
    const answers = await Promise.all([
      t.json("GET", "/nope"),
      t.json("POST", LOGIN, { raw: "x".repeat(MAX_BODY_BYTES + 1), headers: JSON_TYPE }),
      t.json("POST", LOGIN, { raw: "a=b", headers: { "content-type": "text/plain" } }),
      t.json("POST", LOGIN, { raw: "{", headers: JSON_TYPE }),
      t.json("POST", LOGIN, { body: {} }),
      t.json("GET", "/api/v1/auth/me"),
      t.json("GET", "/api/v1/auth/me", { token: "not.a.token" }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([404, 413, 415, 422, 422, 401, 401]);
    const ids = answers.map((a) => a.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(REQUEST_ID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("a well-formed incoming X-Request-Id is kept, a malformed one replaced", async () => {
    const kept = await t.json("GET", "/nope", { headers: { "x-request-id": "edge-7f3a.42_x" } });
    expect(kept.headers.get("x-request-id")).toBe("edge-7f3a.42_x");
    for (const bad of ["has space", "x".repeat(65), "<script>", "a\u00e9"]) {
      const r = await t.json("GET", "/nope", { headers: { "x-request-id": bad } });
      const id = r.headers.get("x-request-id");
      expect(id).not.toBe(bad);
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    }
  });

  test("401 answers carry WWW-Authenticate: Bearer", async () => {
    const r = await t.json("GET", "/api/v1/auth/sessions");
    expectError(r, 401, "not_authenticated");
    expect(r.headers.get("www-authenticate")).toBe("Bearer");
  });
});
