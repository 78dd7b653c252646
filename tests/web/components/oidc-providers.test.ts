/** The admin screen "Sign-in providers" (issue 17): list, add, edit, delete, the redirect URI. */
import { afterEach, describe, expect, test } from "bun:test";
import { fakeFetch, json, registerDom, until } from "./dom";

registerDom("http://acme.localhost:8000/sign-in-providers");
const { h, render } = await import("preact");
const { SessionContext } = await import("../../../web/shared/session");
const { default: SignInProvidersScreen } = await import("../../../web/sign-in-providers");
const { parseDomains } = await import("../../../web/sign-in-providers/kinds");
const { Toasts } = await import("../../../web/shared/toast");
const { stopRefresh } = await import("../../../web/api/client");
const { screenKit, type, choose, toggle } = await import("./oidc-dom");

const kit = screenKit(h, render, SessionContext as never);
const { byLabel, button, text } = kit;
afterEach(() => {
  kit.unmount();
  stopRefresh();
});

const REDIRECT = "http://acme.localhost:8000/api/v1/auth/oauth/callback";
const provider = (over: Record<string, unknown> = {}) => ({
  id: "p1",
  kind: "google",
  name: "Google",
  issuer: null,
  client_id: "cid-1",
  allowed_domains: ["acme.test"],
  auto_join: true,
  default_profile_id: null,
  enabled: true,
  redirect_uri: REDIRECT,
  created_at: "2030-01-01T00:00:00Z",
  ...over,
});
const profiles = [
  { id: "prof-admin", name: "Administrator", is_admin: true },
  { id: "prof-sales", name: "Sales", is_admin: false },
];
const dialogs = () => [...kit.root().querySelectorAll("dialog")].filter((d) => (d as HTMLDialogElement).open);

describe("sign-in providers screen", () => {
  test("the domain list is read from commas and spaces, lower-cased, a leading @ dropped, once each", () => {
    expect(parseDomains(" Acme.com, @acme.org;acme.com\nbeta.acme.com ")).toEqual(["acme.com", "acme.org", "beta.acme.com"]);
    expect(parseDomains("  ")).toEqual([]);
  });

  test("loading, then the empty state; a failed list shows the error and retries", async () => {
    let fail = true;
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const f = fakeFetch({
      "GET /api/v1/auth/providers": async () => {
        await gate;
        return fail ? json(500, { detail: "The server failed.", code: "internal_error" }) : json(200, { items: [] });
      },
      "GET /api/v1/users/profiles": () => json(200, profiles),
    });
    try {
      kit.mount(h(SignInProvidersScreen, {}));
      await until(() => expect(text()).toContain("Loading providers…"));
      release();
      await until(() => expect(kit.root().querySelector('[role="alert"]')?.textContent).toContain("The server failed."));
      fail = false;
      button("Try again").click();
      await until(() => expect(text()).toContain("No sign-in providers yet"));
    } finally {
      f.restore();
    }
  });

  test("adding an OpenID Connect provider: the issuer is asked for OIDC only, the body is what the admin chose, the redirect URI follows with a Copy button", async () => {
    let list: unknown[] = [];
    const f = fakeFetch({
      "GET /api/v1/auth/providers": () => json(200, { items: list }),
      "GET /api/v1/users/profiles": () => json(200, profiles),
      "POST /api/v1/auth/providers": (c) => {
        const b = c.body as Record<string, unknown>;
        if (!b.client_id) return json(422, { detail: [{ loc: ["body", "client_id"], msg: "Field required", type: "missing" }] });
        const { client_secret: _, ...rest } = b;
        const p = provider({ ...rest, id: "p2" });
        list = [p];
        return json(201, p);
      },
    });
    const copied: string[] = [];
    Object.defineProperty(navigator, "clipboard", { value: { writeText: async (t: string) => void copied.push(t) }, configurable: true });
    try {
      kit.mount(h(SignInProvidersScreen, {}));
      await until(() => expect(text()).toContain("No sign-in providers yet"));
      button("Add provider").click();
      await until(() => byLabel("Provider type"));
      // Google: its issuer is known, so no issuer field; the button name is suggested.
      expect(kit.maybeLabel("Issuer URL")).toBe(false);
      expect(byLabel("Name on the sign-in button").value).toBe("Google");
      expect(byLabel("Client secret").type).toBe("password");
      expect(byLabel("Client secret").getAttribute("autocomplete")).toBe("new-password");
      await choose(byLabel("Provider type") as unknown as HTMLSelectElement, "oidc");
      expect(kit.maybeLabel("Issuer URL")).toBe(true);
      await type(byLabel("Name on the sign-in button"), "Acme ID");
      await type(byLabel("Issuer URL"), "https://id.acme.test");
      await type(byLabel("Client secret"), "s3cret-value");
      await type(byLabel("Allowed email domains"), "acme.test, @Acme.org");
      await toggle(byLabel("Let new people join"));
      await choose(byLabel("Profile of people who join") as unknown as HTMLSelectElement, "prof-sales");
      button("Add provider", true).click(); // no client id yet: the 422 shows beside the field
      await until(() => expect(byLabel("Client ID").getAttribute("aria-invalid")).toBe("true"));
      expect(text()).toContain("Enter the client ID."); // the 422 as a sentence (api/messages.ts)
      await type(byLabel("Client ID"), "acme-client");
      button("Add provider", true).click();
      await until(() => expect(text()).toContain("Added “Acme ID”"));
      const post = f.calls.filter((c) => c.method === "POST").at(-1)!;
      expect(post.body).toEqual({
        kind: "oidc",
        name: "Acme ID",
        issuer: "https://id.acme.test",
        client_id: "acme-client",
        client_secret: "s3cret-value",
        allowed_domains: ["acme.test", "acme.org"],
        auto_join: true,
        default_profile_id: "prof-sales",
        enabled: true,
      });
      expect(byLabel("Redirect URI").value).toBe(REDIRECT);
      expect(byLabel("Redirect URI").readOnly).toBe(true);
      button(`Copy Redirect URI`).click();
      await until(() => expect(copied).toEqual([REDIRECT]));
      await until(() => expect(text()).toContain("Copied."));
      button("Done").click();
      await until(() => expect(kit.root().querySelector("tbody")?.textContent).toContain("Acme ID"));
      // The secret is never shown back.
      expect(kit.root().innerHTML).not.toContain("s3cret-value");
    } finally {
      f.restore();
    }
  });

  test("editing keeps the secret unless a new one is typed; deleting asks first", async () => {
    let list = [provider(), provider({ id: "p3", kind: "github", name: "GitHub", allowed_domains: [], auto_join: false, enabled: false })];
    const f = fakeFetch({
      "GET /api/v1/auth/providers": () => json(200, { items: list }),
      "GET /api/v1/users/profiles": () => json(200, profiles),
      "PATCH /api/v1/auth/providers/p1": (c) =>
        (c.body as { name: string }).name === "GitHub"
          ? json(409, { detail: "Another identity provider of this organization has this name.", code: "provider_name_taken" })
          : json(200, provider(c.body as Record<string, unknown>)),
      "DELETE /api/v1/auth/providers/p3": () => {
        list = list.filter((p) => p.id !== "p3");
        return new Response(null, { status: 204 });
      },
    });
    try {
      kit.mount(h(SignInProvidersScreen, {}));
      await until(() => expect(kit.root().querySelectorAll("tbody tr").length).toBe(2));
      const rows = [...kit.root().querySelectorAll("tbody tr")].map((r) => r.textContent);
      expect(rows[0]).toContain("acme.test");
      expect(rows[0]).toContain("New people may join");
      expect(rows[0]).toContain("Enabled");
      expect(rows[1]).toContain("Members only");
      expect(rows[1]).toContain("Disabled");

      button("Edit Google").click();
      await until(() => expect(byLabel("Client ID").value).toBe("cid-1"));
      expect(kit.maybeLabel("Provider type")).toBe(false); // the kind is chosen once
      expect(byLabel("Client secret").value).toBe("");
      expect(byLabel("Redirect URI").value).toBe(REDIRECT);
      await type(byLabel("Name on the sign-in button"), "GitHub");
      button("Save provider").click();
      await until(() => expect(byLabel("Name on the sign-in button").getAttribute("aria-invalid")).toBe("true"));
      expect(text()).toContain("Another identity provider of this organization has this name.");
      await type(byLabel("Name on the sign-in button"), "Google Workspace");
      button("Save provider").click();
      await until(() => expect(f.calls.filter((c) => c.method === "PATCH").length).toBe(2));
      const patch = f.calls.filter((c) => c.method === "PATCH")[1]!.body as Record<string, unknown>;
      expect(patch.name).toBe("Google Workspace");
      expect("client_secret" in patch).toBe(false);
      expect("kind" in patch).toBe(false);

      await until(() => expect(dialogs().length).toBe(0));
      button("Delete GitHub").click();
      await until(() => expect(dialogs().some((d) => d.textContent?.includes("Delete the provider “GitHub”?"))).toBe(true));
      expect(f.calls.some((c) => c.method === "DELETE")).toBe(false);
      button("Delete provider").click();
      await until(() => expect(kit.root().querySelectorAll("tbody tr").length).toBe(1));
      expect(f.calls.filter((c) => c.method === "DELETE").map((c) => c.path)).toEqual(["/api/v1/auth/providers/p3"]);
    } finally {
      f.restore();
    }
  });
  test("reauthentication_required on save or delete: the step-up dialog asks for the password (and the code with 2FA on), renews the proof, and retries once", async () => {
    let proven = false;
    const list = [provider()];
    const stale = () => json(403, { detail: "Confirm your password first.", code: "reauthentication_required" });
    const f = fakeFetch({
      "GET /api/v1/auth/providers": () => json(200, { items: list }),
      "GET /api/v1/users/profiles": () => json(200, profiles),
      "GET /api/v1/auth/2fa/status": () => json(200, { enabled: true, pending: false, backup_codes_remaining: 8 }),
      "POST /api/v1/auth/reauthenticate": (c) => {
        const b = c.body as { password: string; code?: string };
        if (b.password !== "right password" || b.code !== "123456") return json(401, { detail: "Wrong.", code: "invalid_credentials" });
        proven = true;
        return json(200, { detail: "Confirmed.", reauthenticated_at: "2030-01-01T00:00:00Z" });
      },
      "PATCH /api/v1/auth/providers/p1": (c) => (proven ? json(200, provider(c.body as Record<string, unknown>)) : stale()),
      "DELETE /api/v1/auth/providers/p1": () => (proven ? new Response(null, { status: 204 }) : stale()),
    });
    try {
      kit.mount(h("div", null, h(SignInProvidersScreen, {}), h(Toasts, {})));
      await until(() => expect(kit.root().querySelectorAll("tbody tr").length).toBe(1));
      await until(() => expect(f.calls.some((c) => c.path === "/api/v1/auth/2fa/status")).toBe(true));
      button("Edit Google").click();
      await until(() => expect(byLabel("Client ID").value).toBe("cid-1"));
      await type(byLabel("Name on the sign-in button"), "Google Workspace");
      button("Save provider").click();
      await until(() => expect(dialogs().some((d) => d.textContent?.includes("Confirm it's you"))).toBe(true));
      expect(text()).toContain("enter your password again to change the organization's sign-in providers");
      await type(byLabel("Password"), "wrong");
      await type(byLabel("Authenticator or backup code"), "123456");
      button("Confirm").click();
      await until(() => expect(text()).toContain("That password (or code) is not right."));
      await type(byLabel("Password"), "right password");
      button("Confirm").click();
      await until(() => expect(dialogs().length).toBe(0));
      const patches = f.calls.filter((c) => c.method === "PATCH");
      expect(patches.length).toBe(2);
      expect(patches[1]!.body).toEqual(patches[0]!.body);
      expect(f.calls.filter((c) => c.path === "/api/v1/auth/reauthenticate").map((c) => c.body)).toEqual([
        { password: "wrong", code: "123456" },
        { password: "right password", code: "123456" },
      ]);

      // Cancelling the step-up leaves the provider in place and says why.
      proven = false;
      button("Delete Google").click();
      await until(() => expect(dialogs().some((d) => d.textContent?.includes("Delete the provider “Google”?"))).toBe(true));
      button("Delete provider").click();
      await until(() => expect(dialogs().some((d) => d.textContent?.includes("Confirm it's you"))).toBe(true));
      const stepUp = dialogs().find((d) => d.textContent?.includes("Confirm it's you"))!;
      ([...stepUp.querySelectorAll("button")].find((b) => b.textContent === "Cancel") as HTMLButtonElement).click();
      await until(() => expect(text()).toContain("Cancelled: your password is needed for this change."));
      expect(f.calls.filter((c) => c.method === "DELETE").length).toBe(1);
    } finally {
      f.restore();
    }
  });
  test("an admin without a password (joined through a provider) is told to sign in again through it, not asked for a password", async () => {
    const f = fakeFetch({
      "GET /api/v1/auth/providers": () => json(200, { items: [provider()] }),
      "GET /api/v1/users/profiles": () => json(200, profiles),
      "DELETE /api/v1/auth/providers/p1": () => json(403, { detail: "Confirm your password first.", code: "reauthentication_required" }),
    });
    try {
      kit.mount(h("div", null, h(SignInProvidersScreen, {}), h(Toasts, {})), { has_password: false });
      await until(() => expect(kit.root().querySelectorAll("tbody tr").length).toBe(1));
      button("Delete Google").click();
      await until(() => expect(dialogs().some((d) => d.textContent?.includes("Delete the provider “Google”?"))).toBe(true));
      button("Delete provider").click();
      await until(() => expect(dialogs().some((d) => d.textContent?.includes("sign in again through your identity provider"))).toBe(true));
      expect(kit.maybeLabel("Password")).toBe(false);
      button("OK").click();
      await until(() => expect(dialogs().some((d) => d.textContent?.includes("Confirm it's you"))).toBe(false));
      expect(f.calls.filter((c) => c.path === "/api/v1/auth/reauthenticate")).toEqual([]);
      expect(f.calls.filter((c) => c.method === "DELETE").length).toBe(1);
    } finally {
      f.restore();
    }
  });
});
