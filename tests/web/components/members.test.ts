import { afterEach, describe, expect, test } from "bun:test";
import { fakeFetch, json, registerDom, until } from "./dom";

registerDom("http://acme.localhost:8000/team");
const { h, render } = await import("preact");
const { setConfig } = await import("../../../web/shared/config");
const { SessionContext } = await import("../../../web/shared/session");
const { RemoveMember } = await import("../../../web/team/remove-member");
const { ModuleOff } = await import("../../../web/organization/module-off");
const { default: OrganizationScreen } = await import("../../../web/organization");
const { default: PublicHome } = await import("../../../web/signup");
const { stopRefresh } = await import("../../../web/api/client");

const user = (id: string, name: string, role: "admin" | "member" = "member") => ({
  id,
  tenant_id: "t1",
  email: `${id}@acme.test`,
  full_name: name,
  role,
  profile_id: null,
  created_at: "2030-01-01T00:00:00Z",
  email_verified: true,
  email_verified_at: "2030-01-01T00:00:00Z",
  email_verified_by: "mail" as const,
});
const tenant = { id: "t1", name: "Acme", subdomain: "acme", modules: ["crm", "users"], created_at: "2030-01-01T00:00:00Z" };
const session = (role: "admin" | "member") => ({ me: { user: user("me", "Me", role), tenant }, reload: async () => null, signOut: async () => {} });

let root: HTMLElement;
const mount = (vnode: import("preact").ComponentChild, role: "admin" | "member" = "admin") => {
  root = document.createElement("div");
  document.body.appendChild(root);
  render(h(SessionContext.Provider, { value: session(role) as never }, vnode), root);
};
afterEach(() => {
  render(null, root);
  root.remove();
  stopRefresh();
});
const text = () => root.textContent ?? "";
const button = (name: string) => [...root.querySelectorAll("button")].find((x) => x.textContent?.trim() === name) as HTMLButtonElement;
const select = () => root.querySelector("select") as HTMLSelectElement;
const tick = () => new Promise((r) => setTimeout(r, 0));

describe("removing a member", () => {
  test("offers the other members for the deals, sends reassign_to, and explains a 409 last_admin", async () => {
    let answer = 409;
    const f = fakeFetch({
      "GET /api/v1/users": () => json(200, { items: [user("ann", "Ann"), user("bo", "Bo"), user("cy", "Cy")], total: 3, page: 1, size: 100, pages: 1 }),
      "DELETE /api/v1/users/bo": () => (answer === 409 ? json(409, { detail: "Last admin.", code: "last_admin" }) : new Response(null, { status: 204 })),
    });
    const removed: string[] = [];
    try {
      mount(h(RemoveMember, { user: user("bo", "Bo", "admin"), onClose: () => {}, onRemoved: () => removed.push("bo") }));
      await until(() => expect([...select().options].map((o) => o.textContent)).toEqual(["Nobody (leave them unassigned)", "Ann", "Cy"]));
      select().value = "cy";
      select().dispatchEvent(new window.Event("change", { bubbles: true }) as unknown as Event);
      await tick();
      button("Remove member").click();
      await until(() => expect(text()).toContain("make another member an admin first"));
      expect(f.calls.at(-1)).toMatchObject({ method: "DELETE", path: "/api/v1/users/bo?reassign_to=cy" });
      expect(removed).toEqual([]);
      answer = 204;
      button("Remove member").click();
      await until(() => expect(removed).toEqual(["bo"]));
    } finally {
      f.restore();
    }
  });
});

describe("a module that is off", () => {
  test("says so, that the data is kept, and who can turn it on", () => {
    mount(h(ModuleOff, { module: "crm" }), "admin");
    expect(text()).toContain("The CRM module is off");
    expect(text()).toContain("Nothing was deleted");
    expect(root.querySelector("a")?.getAttribute("href")).toBe("/organization");
    render(null, root);
    root.remove();
    mount(h(ModuleOff, { module: "crm" }), "member");
    expect(text()).toContain("Ask an admin");
    expect(root.querySelector("a")).toBeNull();
  });
});

describe("organization settings", () => {
  test("sends the trimmed name and the modules left on", async () => {
    const f = fakeFetch({
      "GET /api/v1/tenant": () => json(200, tenant),
      "PATCH /api/v1/tenant": (c) => json(200, { ...tenant, ...(c.body as object) }),
    });
    try {
      mount(h(OrganizationScreen, {}));
      // The two modules, then the two sign-in rules.
      await until(() => expect(root.querySelectorAll('input[type="checkbox"]').length).toBe(4));
      const crm = root.querySelectorAll('input[type="checkbox"]')[0] as HTMLInputElement;
      crm.checked = false;
      crm.dispatchEvent(new window.Event("change", { bubbles: true }) as unknown as Event);
      const name = root.querySelector('input:not([type="checkbox"])') as HTMLInputElement;
      name.value = "  Acme Two ";
      name.dispatchEvent(new window.Event("input", { bubbles: true }) as unknown as Event);
      await tick();
      button("Save settings").click();
      await until(() => expect(f.calls.find((c) => c.method === "PATCH")?.body).toEqual({ name: "Acme Two", modules: ["users"] }));
    } finally {
      f.restore();
    }
  });

  test("the sign-in rules are saved on their own: the two switches, nothing else", async () => {
    const f = fakeFetch({
      "GET /api/v1/tenant": () => json(200, { ...tenant, require_passkey_or_2fa: false, require_passkey_for_admins: false }),
      "PATCH /api/v1/tenant": (c) => json(200, { ...tenant, ...(c.body as object) }),
    });
    try {
      mount(h(OrganizationScreen, {}));
      await until(() => expect(root.querySelectorAll('input[role="switch"]').length).toBe(2));
      const admins = root.querySelectorAll('input[role="switch"]')[1] as HTMLInputElement;
      admins.checked = true;
      admins.dispatchEvent(new window.Event("change", { bubbles: true }) as unknown as Event);
      await tick();
      button("Save sign-in rules").click();
      await until(() => expect(f.calls.find((c) => c.method === "PATCH")?.body).toEqual({ require_passkey_or_2fa: false, require_passkey_for_admins: true }));
    } finally {
      f.restore();
    }
  });
});

describe("the public page", () => {
  test("closed signup: no form, and how to get a workspace; open: the form", () => {
    setConfig({ baseDomain: "localhost", sharedCookies: false, smtp: false, signup: "closed" });
    mount(h(PublicHome, {}));
    expect(text()).toContain("signup is closed on this server");
    expect(text()).toContain("suite tenant create");
    expect(button("Create workspace")).toBeUndefined();
    render(null, root);
    root.remove();
    setConfig({ baseDomain: "localhost", sharedCookies: false, smtp: false, signup: "open" });
    mount(h(PublicHome, {}));
    expect(button("Create workspace")).toBeDefined();
    setConfig(undefined);
  });
});
