/** The handoff's rules in the page (issue 29.5): no handoff at all with shared cookies, and only with the nonce this tab kept. */
import { afterEach, describe, expect, test } from "bun:test";
import { fakeFetch, json, registerDom } from "./dom";

registerDom("http://acme.localhost:8000/");
const { setConfig } = await import("../../../web/shared/config");
const { finishHandoff } = await import("../../../web/sign-in/handoff");

const DEV = { baseDomain: "localhost", sharedCookies: false, smtp: true, signup: "open" as const };
const PAIR = { access_token: "a", refresh_token: "r2", token_type: "bearer" };
afterEach(() => {
  setConfig(DEV);
  sessionStorage.clear();
});

async function arrive(url: string) {
  history.replaceState(null, "", url);
  const server = fakeFetch({ "POST /api/v1/auth/refresh": () => json(200, PAIR) });
  try {
    await finishHandoff();
  } finally {
    server.restore();
  }
  return server.calls;
}

describe("finishHandoff", () => {
  test("with shared cookies a #handoff is never spent, nonce or not, and leaves the address bar", async () => {
    setConfig({ ...DEV, sharedCookies: true });
    sessionStorage.setItem("suite-handoff-nonce", JSON.stringify({ nonce: "n1", at: Date.now() }));
    expect(await arrive("/welcome?next=%2Fdeals#handoff=attacker-token&nonce=n1")).toEqual([]);
    expect(location.pathname + location.hash).toBe("/deals");
  });

  test("without the nonce this tab kept, nothing is spent; with it, the token is exchanged once", async () => {
    expect(await arrive("/welcome#handoff=attacker-token")).toEqual([]);
    sessionStorage.setItem("suite-handoff-nonce", JSON.stringify({ nonce: "n1", at: Date.now() }));
    expect(await arrive("/welcome#handoff=attacker-token&nonce=n2")).toEqual([]);
    // The kept nonce is gone after any arrival: it cannot be tried twice.
    expect(sessionStorage.getItem("suite-handoff-nonce")).toBeNull();
    sessionStorage.setItem("suite-handoff-nonce", JSON.stringify({ nonce: "n3", at: Date.now() - 3 * 60_000 }));
    expect(await arrive("/welcome#handoff=own-token&nonce=n3")).toEqual([]);
    sessionStorage.setItem("suite-handoff-nonce", JSON.stringify({ nonce: "n4", at: Date.now() }));
    const calls = await arrive("/welcome?next=%2Fteam#handoff=own-token&nonce=n4");
    expect(calls.map((c) => [c.method, c.path, c.body])).toEqual([["POST", "/api/v1/auth/refresh", { refresh_token: "own-token" }]]);
    expect(location.pathname + location.hash).toBe("/team");
  });
});
