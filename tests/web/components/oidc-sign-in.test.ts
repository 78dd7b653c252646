/** Sign-in through a provider (issue 17), the web side: Continue-with links, error codes, the 2FA hand-over. */
import { afterEach, describe, expect, test } from "bun:test";
import { fakeFetch, json, registerDom, until } from "./dom";

registerDom("http://acme.localhost:8000/sign-in");
const { h, render } = await import("preact");
const { setConfig } = await import("../../../web/shared/config");
const { SessionContext } = await import("../../../web/shared/session");
const { default: SignIn } = await import("../../../web/sign-in");
const { oauthMessage } = await import("../../../web/sign-in/oauth");
const { stopRefresh } = await import("../../../web/api/client");
const { OAUTH_ERRORS } = await import("../../../src/auth/sign-in-providers/model");
const { screenKit, type } = await import("./oidc-dom");

const WORKSPACE = { baseDomain: "localhost", sharedCookies: false, smtp: true, signup: "open" as const };
setConfig(WORKSPACE);
const kit = screenKit(h, render, SessionContext as never);
const { byLabel, button, text } = kit;
afterEach(() => {
  kit.unmount();
  stopRefresh();
  setConfig(WORKSPACE);
});

const publicProviders = [
  { id: "p-g", name: "Google", kind: "google" },
  { id: "p-oidc", name: "Acme ID", kind: "oidc" },
];
const links = () => [...kit.root().querySelectorAll("a.oauth")].map((a) => [a.textContent, a.getAttribute("href")]);

describe("sign-in page", () => {
  test("one Continue-with link per enabled provider, to the server's start URL (a full page load)", async () => {
    history.replaceState(null, "", "/sign-in");
    const f = fakeFetch({ "GET /api/v1/auth/providers/public": () => json(200, publicProviders) });
    try {
      kit.mount(h(SignIn, {}));
      await until(() => expect(links().length).toBe(2));
      expect(links()).toEqual([
        ["Continue with Google", "/api/v1/auth/oauth/p-g/start"],
        ["Continue with Acme ID", "/api/v1/auth/oauth/p-oidc/start"],
      ]);
      expect(f.calls[0]!.credentials).toBe("same-origin");
      expect(kit.root().querySelector('ul[aria-label="Sign in with another account"]')).not.toBeNull();
      // The password form stays.
      expect(byLabel("Password")).toBeTruthy();
    } finally {
      f.restore();
    }
  });

  test("no providers (or a failed list): no links and no divider; on the base domain nothing is asked", async () => {
    history.replaceState(null, "", "/sign-in");
    let answer = json(200, { items: [] });
    const f = fakeFetch({ "GET /api/v1/auth/providers/public": () => answer });
    try {
      kit.mount(h(SignIn, {}));
      await until(() => expect(f.calls.length).toBe(1));
      await new Promise((r) => setTimeout(r, 10));
      expect(links()).toEqual([]);
      expect(kit.root().querySelector(".divider")).toBeNull();
      kit.unmount();

      answer = json(500, { detail: "boom", code: "internal_error" });
      kit.mount(h(SignIn, {}));
      await until(() => expect(f.calls.length).toBe(2));
      await new Promise((r) => setTimeout(r, 10));
      expect(links()).toEqual([]);
      expect(text()).not.toContain("boom");
      kit.unmount();

      setConfig({ ...WORKSPACE, baseDomain: "suite.test" }); // acme.localhost is then no workspace host
      kit.mount(h(SignIn, {}));
      await new Promise((r) => setTimeout(r, 20));
      expect(f.calls.length).toBe(2);
      expect(links()).toEqual([]);
    } finally {
      f.restore();
    }
  });

  test("every code the server's callback can send has its own sentence, for a sign-in and for a link", () => {
    const codes = Object.keys(OAUTH_ERRORS);
    expect(codes.length).toBeGreaterThan(5);
    for (const code of codes) {
      for (const during of ["sign-in", "link"] as const) {
        const m = oauthMessage(code, during);
        expect(m).not.toContain("reference:");
        expect(m).not.toContain(code);
      }
    }
  });

  test("each error code the callback sends reads as a sentence (an unknown one too), and the code leaves the address bar", async () => {
    expect(oauthMessage("oauth_account_exists")).toContain("link this provider from My account");
    expect(oauthMessage("oauth_email_unverified")).toContain("has not confirmed your email address");
    expect(oauthMessage("oauth_domain_not_allowed")).toContain("domain may not join");
    expect(oauthMessage("oauth_state_invalid")).toContain("Start again");
    expect(oauthMessage("oauth_provider_error")).toContain("could not sign you in");
    expect(oauthMessage("oauth_identity_other_org")).toContain("another organization");
    expect(oauthMessage("tenant_disabled")).toContain("This organization has been disabled");
    expect(oauthMessage("oauth_something_new")).toBe("Signing in through that provider did not work. Try again, or sign in another way (reference: oauth_something_new).");
    // Something that is no code is never echoed.
    expect(oauthMessage("<b>hi</b>")).toBe("Signing in through that provider did not work. Try again, or sign in another way.");

    history.replaceState(null, "", "/sign-in?error=oauth_account_exists&next=%2Fdeals%3Fstage%3Dwon");
    const f = fakeFetch({ "GET /api/v1/auth/providers/public": () => json(200, []) });
    try {
      kit.mount(h(SignIn, {}));
      await until(() => expect(kit.root().querySelector('[role="alert"]')?.textContent).toBe(oauthMessage("oauth_account_exists")));
      expect(text()).not.toContain("oauth_account_exists");
      expect(location.pathname + location.search).toBe("/sign-in?next=%2Fdeals%3Fstage%3Dwon");
    } finally {
      f.restore();
    }
  });

  test("2FA after the provider: the temp token is taken from the fragment, wiped from the address at once, and spent by the code step", async () => {
    history.replaceState(null, "", "/sign-in?step=2fa#temp_token=tmp-oauth-1");
    const seen: string[] = [];
    const f = fakeFetch({
      "GET /api/v1/auth/providers/public": () => json(200, publicProviders),
      "POST /api/v1/auth/2fa/verify": (c) =>
        (c.body as { code: string }).code === "123456"
          ? json(200, { access_token: "a", refresh_token: "r", token_type: "bearer" })
          : json(401, { detail: "Invalid code.", code: "invalid_2fa_code" }),
    });
    try {
      kit.mount(h(SignIn, {}));
      seen.push(location.href);
      expect(location.hash).toBe("");
      expect(location.search).toBe("");
      expect(text()).toContain("Two-step verification");
      expect(links()).toEqual([]); // the code step, not the sign-in choices
      await type(byLabel("Code"), "123456");
      button("Verify").click();
      await until(() => expect(location.pathname).toBe("/deals"));
      expect(f.calls.find((c) => c.path === "/api/v1/auth/2fa/verify")!.body).toEqual({ temp_token: "tmp-oauth-1", code: "123456" });
      expect(seen[0]).toBe("http://acme.localhost:8000/sign-in");
    } finally {
      f.restore();
    }
  });

  test("an expired hand-over sends the person back to the sign-in choices with a reason", async () => {
    history.replaceState(null, "", "/sign-in?step=2fa#temp_token=tmp-old");
    const f = fakeFetch({
      "GET /api/v1/auth/providers/public": () => json(200, publicProviders),
      "POST /api/v1/auth/2fa/verify": () => json(401, { detail: "Expired.", code: "invalid_temp_token" }),
    });
    try {
      kit.mount(h(SignIn, {}));
      await type(byLabel("Code"), "123456");
      button("Verify").click();
      await until(() => expect(text()).toContain("That took too long: sign in again."));
      await until(() => expect(links().length).toBe(2));
      kit.unmount();
      // Mounted again (a later visit): the spent token is not offered again.
      kit.mount(h(SignIn, {}));
      expect(text()).not.toContain("Two-step verification");
    } finally {
      f.restore();
    }
  });
});
