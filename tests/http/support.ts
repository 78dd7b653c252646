import { expect } from "bun:test";
import { createApp } from "../../src/app";
import { type TestApp, setCookies } from "../helpers";

/** What `t.json` answers. */
export interface JsonResult {
  status: number;
  headers: Headers;
  body: any;
}

export const JSON_TYPE = { "content-type": "application/json" };

/** The request-id shape core.ts accepts and generates. */
export const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** An error (docs/interface.md#errors): exactly `{detail: <sentence>, code}`, JSON, with a request id. */
export function expectError(r: JsonResult, status: number, code: string): void {
  expect({ status: r.status, body: r.body }).toEqual({ status, body: { detail: expect.any(String), code } });
  expect(r.body.detail.length).toBeGreaterThan(0);
  expect(r.headers.get("content-type")).toStartWith("application/json");
  expect(r.headers.get("x-request-id")).toMatch(REQUEST_ID);
}

/** A validation failure (docs/interface.md#errors): 422 and exactly these items, in this order. */
export function expect422(r: JsonResult, items: unknown[]): void {
  expect({ status: r.status, body: r.body }).toEqual({ status: 422, body: { detail: items } });
  expect(r.headers.get("x-request-id")).toMatch(REQUEST_ID);
}

/** The access-log lines (one per request) of a test app. */
export const accessLines = (t: TestApp) => t.logs.filter((l) => l.msg === "request");

/** Signs in with a password and answers the cookie values the response set. */
export async function cookieLogin(t: TestApp, email: string, password: string, tenant?: string) {
  const res = await t.request("POST", "/api/v1/auth/login", { body: { email, password }, tenant });
  expect(res.status).toBe(200);
  const jar = setCookies(res);
  expect(Object.keys(jar).sort()).toEqual(["svc_refresh", "svc_session"]);
  return { session: jar.svc_session!.value, refresh: jar.svc_refresh!.value, body: (await res.json()) as Record<string, string> };
}

/** The same app, listening on a free port (for what only a real socket does: chunked bodies). */
export function listen(t: TestApp) {
  const server = createApp(t.ctx).listen({ port: 0 });
  const port = server.server!.port;
  return { url: (path: string) => `http://localhost:${port}${path}`, stop: () => server.stop(true) };
}

/** A body that arrives in `count` chunks of `size` bytes with no Content-Length (chunked). */
export function chunkedBody(parts: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      if (i < parts.length) controller.enqueue(parts[i++]!);
      else controller.close();
    },
  });
}

export const bytes = (text: string) => new TextEncoder().encode(text);
