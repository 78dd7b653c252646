/** My account's side of sign-in providers (issue 17): linked accounts (link, back from the provider, unlink) and each session's sign-in method. */
import { afterEach, describe, expect, test } from "bun:test";
import { fakeFetch, json, registerDom, until } from "./dom";

registerDom("http://acme.localhost:8000/settings");
const { h, render } = await import("preact");
const { setConfig } = await import("../../../web/shared/config");
const { SessionContext } = await import("../../../web/shared/session");
const { oauthMessage } = await import("../../../web/sign-in/oauth");
const { Identities, LAST_METHOD } = await import("../../../web/account/identities");
const { Sessions } = await import("../../../web/account/sessions");
const { PasswordPanel } = await import("../../../web/account/set-password");
const { stopRefresh } = await import("../../../web/api/client");
const { screenKit } = await import("./oidc-dom");

setConfig({ baseDomain: "localhost", sharedCookies: false, smtp: true, signup: "open" });
const kit = screenKit(h, render, SessionContext as never);
const { button, text } = kit;
afterEach(() => {
  kit.unmount();
  stopRefresh();
});

const publicProviders = [
  { id: "p-g", name: "Google", kind: "google" },
  { id: "p-oidc", name: "Acme ID", kind: "oidc" },
];

const identity = (over: Record<string, unknown> = {}) => ({
  id: "i1",
  provider_id: "p-g",
  provider_name: "Google",
  kind: "google",
  email: "me@acme.test",
  created_at: "2030-01-02T03:04:05Z",
  ...over,
});

describe("My account: linked accounts", () => {
  test("lists my linked accounts; Link asks the server for the provider's address and goes there", async () => {
    history.replaceState(null, "", "/settings");
    const f = fakeFetch({
      "GET /api/v1/auth/identities": () => json(200, { items: [identity()] }),
      "GET /api/v1/auth/providers/public": () => json(200, publicProviders),
      "GET /api/v1/auth/2fa/status": () => json(200, { enabled: false, pending: false, backup_codes_remaining: 0 }),
      "POST /api/v1/auth/identities/link/p-oidc": () => json(200, { authorization_url: "https://id.acme.test/auth?client_id=x&state=s" }),
    });
    const assigned: string[] = [];
    const real = location.assign;
    location.assign = ((u: string) => void assigned.push(u)) as typeof location.assign;
    try {
      kit.mount(h(Identities, {}));
      await until(() => expect(kit.root().querySelector("ul.identities")?.textContent).toContain("Google · me@acme.test"));
      // Google is linked already: only the other provider is offered.
      expect(() => button("Link Google")).toThrow();
      button("Link Acme ID").click();
      await until(() => expect(assigned).toEqual(["https://id.acme.test/auth?client_id=x&state=s"]));
      const post = f.calls.find((c) => c.method === "POST")!;
      expect(post.body).toEqual({});
    } finally {
      location.assign = real;
      f.restore();
    }
  });

  test("back from the provider: ?linked says so, ?error explains, and the query is cleaned", async () => {
    const f = fakeFetch({
      "GET /api/v1/auth/identities": () => json(200, { items: [identity()] }),
      "GET /api/v1/auth/providers/public": () => json(200, publicProviders),
      "GET /api/v1/auth/2fa/status": () => json(200, { enabled: false, pending: false, backup_codes_remaining: 0 }),
    });
    try {
      history.replaceState(null, "", "/settings?linked=p-g");
      kit.mount(h(Identities, {}));
      expect(location.search).toBe("");
      await until(() => expect(kit.root().querySelector('[role="status"].notice')?.textContent).toBe("Your Google account is linked: you can sign in with it."));
      kit.unmount();

      history.replaceState(null, "", "/settings?error=oauth_email_unverified");
      kit.mount(h(Identities, {}));
      expect(location.search).toBe("");
      await until(() => expect(kit.root().querySelector("p.error")?.textContent).toBe(oauthMessage("oauth_email_unverified", "link")));
    } finally {
      f.restore();
    }
  });

  test("unlink asks first; the last way to sign in is explained, not removed", async () => {
    history.replaceState(null, "", "/settings");
    let last = true;
    const f = fakeFetch({
      "GET /api/v1/auth/identities": () => json(200, { items: last ? [identity()] : [] }),
      "GET /api/v1/auth/providers/public": () => json(200, publicProviders),
      "GET /api/v1/auth/2fa/status": () => json(200, { enabled: false, pending: false, backup_codes_remaining: 0 }),
      "DELETE /api/v1/auth/identities/i1": () =>
        last ? json(409, { detail: "This is the last way to sign in.", code: "last_sign_in_method" }) : new Response(null, { status: 204 }),
    });
    try {
      kit.mount(h(Identities, {}));
      await until(() => button("Unlink Google"));
      button("Unlink Google").click();
      await until(() => expect(text()).toContain("Unlink your Google account?"));
      expect(f.calls.some((c) => c.method === "DELETE")).toBe(false);
      button("Unlink").click();
      await until(() => expect(kit.root().querySelector("p.error")?.textContent).toBe(LAST_METHOD));
      expect(text()).toContain("Google · me@acme.test");

      last = false;
      button("Unlink Google").click();
      await until(() => expect(kit.root().querySelector("dialog[open]")?.textContent).toContain("Unlink your Google account?"));
      button("Unlink").click();
      await until(() => expect(text()).toContain("No linked accounts yet."));
      expect(kit.root().querySelector("p.error")).toBeNull();
      expect(f.calls.filter((c) => c.method === "DELETE").length).toBe(2);
    } finally {
      f.restore();
    }
  });

  test("an organization without providers and nothing linked: the section stays out of the way; a failed list says so", async () => {
    history.replaceState(null, "", "/settings");
    let fail = false;
    const f = fakeFetch({
      "GET /api/v1/auth/identities": () => (fail ? json(500, { detail: "The list failed.", code: "internal_error" }) : json(200, { items: [] })),
      "GET /api/v1/auth/providers/public": () => json(200, []),
      "GET /api/v1/auth/2fa/status": () => json(200, { enabled: false, pending: false, backup_codes_remaining: 0 }),
    });
    try {
      kit.mount(h(Identities, {}));
      await until(() => expect(f.calls.length).toBe(3));
      await new Promise((r) => setTimeout(r, 10));
      expect(text()).not.toContain("Linked accounts");
      kit.unmount();
      fail = true;
      kit.mount(h(Identities, {}));
      await until(() => expect(kit.root().querySelector('[role="alert"]')?.textContent).toContain("The list failed."));
    } finally {
      f.restore();
    }
  });
});

describe("My account: sessions", () => {
  test("each session says how it began when the server sends it", async () => {
    const s = (id: string, over: Record<string, unknown>) => ({
      id,
      created_at: "2030-01-01T00:00:00Z",
      last_used_at: "2030-01-01T00:00:00Z",
      expires_at: "2030-02-01T00:00:00Z",
      ip: "127.0.0.1",
      user_agent: "Mozilla/5.0 (X11; Linux x86_64) Chrome/120",
      current: id === "a",
      ...over,
    });
    const f = fakeFetch({
      "GET /api/v1/auth/sessions": () => json(200, [s("a", { method: "oidc:Acme ID" }), s("b", { method: "password" }), s("c", { method: "magic_link" }), s("d", { method: "oidc:Google Workspace" }), s("e", { method: "2fa" }), s("f", { method: "some_future_way" }), s("g", { method: "oidc:Acme ID+2fa" }), s("h", { method: "password+2fa" })]),
    });
    try {
      kit.mount(h(Sessions, {}));
      await until(() => expect(kit.root().querySelectorAll("tbody tr").length).toBe(8));
      expect([...kit.root().querySelectorAll("th")].map((t) => t.textContent)).toContain("Signed in with");
      const cells = [...kit.root().querySelectorAll("tbody tr")].map((r) => r.children[1]!.textContent);
      expect(cells).toEqual([
        "Acme ID",
        "Password",
        "Sign-in link",
        "Google Workspace",
        "Two-step verification",
        "Some future way",
        "Acme ID + two-step verification",
        "Password + two-step verification",
      ]);
    } finally {
      f.restore();
    }
  });
});

describe("My account: password", () => {
  test("an account with a password changes it (the current one asked); one made through a provider gets \"Set a password\", which mails the reset link to its own address", async () => {
    const f = fakeFetch({ "POST /api/v1/auth/password/forgot": () => json(202, { detail: "If the address has an account, a link is on its way." }) });
    try {
      kit.mount(h(PasswordPanel, {}));
      expect(kit.maybeLabel("Current password")).toBe(true);
      expect(button("Change password", true)).toBeTruthy();
      expect(() => button("Set a password")).toThrow();
      kit.unmount();

      kit.mount(h(PasswordPanel, {}), { has_password: false });
      expect(kit.maybeLabel("Current password")).toBe(false);
      expect(() => button("Change password", true)).toThrow();
      button("Set a password").click();
      await until(() => expect(kit.root().querySelector('[role="status"]')?.textContent).toContain("We sent a link to me@acme.test"));
      expect(f.calls.map((c) => `${c.method} ${c.path}`)).toEqual(["POST /api/v1/auth/password/forgot"]);
      expect(f.calls[0]!.body).toEqual({ email: "me@acme.test" });
      expect(() => button("Set a password")).toThrow();
    } finally {
      f.restore();
    }
  });

  test("a refused mail request (too many) says why and keeps the button", async () => {
    const f = fakeFetch({ "POST /api/v1/auth/password/forgot": () => json(429, { detail: "Too many requests. Try again in 60 seconds.", code: "rate_limited" }, { "retry-after": "60" }) });
    try {
      kit.mount(h(PasswordPanel, {}), { has_password: false });
      button("Set a password").click();
      await until(() => expect(kit.root().querySelector('[role="alert"]')?.textContent).toBeTruthy());
      expect(button("Set a password")).toBeTruthy();
      expect(kit.root().querySelector('[role="status"]')).toBeNull();
    } finally {
      f.restore();
    }
  });
});
