/**
 * Copy link on the team screen's invitations: the new link goes to the clipboard when the browser
 * allows it and is shown in a read-only field either way, with the sentence that the earlier link
 * no longer works; the call runs through the screen's step-up guard.
 */
import { afterEach, expect, test } from "bun:test";
import { fakeFetch, json, registerDom, until } from "./dom";

registerDom("http://acme.localhost:8000/team");
const { h, render } = await import("preact");
const { SessionContext } = await import("../../../web/shared/session");
const { Invitations } = await import("../../../web/team/invitations");
const { stopRefresh } = await import("../../../web/api/client");

const URL_ = "http://acme.localhost:8000/accept-invitation#token=t1.fresh-secret";
const pending = {
  id: "inv1",
  email: "pat@acme.test",
  invited_by: "me",
  expires_at: "2030-01-08T00:00:00.000Z",
  accepted_at: null,
  revoked_at: null,
  created_at: "2030-01-01T00:00:00.000Z",
  profile_id: null,
  role_id: null,
};
const me = { user: { id: "me", tenant_id: "t1", email: "me@acme.test", full_name: "Me", role: "admin" }, tenant: { id: "t1", name: "Acme", subdomain: "acme" } };

let root: HTMLElement;
let restore = () => {};
afterEach(() => {
  render(null, root);
  root.remove();
  restore();
  stopRefresh();
});

async function copyWith(clipboard: { writeText: (s: string) => Promise<void> } | undefined) {
  Object.defineProperty(navigator, "clipboard", { value: clipboard, configurable: true });
  const f = fakeFetch({
    "GET /api/v1/users/invitations": () => json(200, { items: [pending], total: 1, page: 1, size: 20, pages: 1 }),
    "POST /api/v1/users/invitations/inv1/link": () => json(200, { url: URL_, expires_at: "2030-01-09T00:00:00.000Z" }),
  });
  restore = f.restore;
  let guarded = 0;
  const guard = <T,>(action: () => Promise<T>) => (guarded++, action());
  root = document.createElement("div");
  document.body.appendChild(root);
  render(h(SessionContext.Provider, { value: { me, reload: async () => null, signOut: async () => {} } as never }, h(Invitations, { profiles: [], refresh: 0, guard })), root);
  const button = () => [...root.querySelectorAll("button")].find((b) => b.textContent?.trim() === "Copy link") as HTMLButtonElement | undefined;
  await until(() => expect(button()).toBeDefined());
  button()!.click();
  await until(() => expect(root.querySelector(".notice")).not.toBeNull());
  const field = root.querySelector(".notice input") as HTMLInputElement;
  return { calls: f.calls, guarded, notice: root.querySelector(".notice")!.textContent ?? "", field };
}

test("the new link lands on the clipboard and in a read-only field; the admin is told the earlier link no longer works", async () => {
  const written: string[] = [];
  const r = await copyWith({ writeText: async (s) => void written.push(s) });
  expect(r.calls.filter((c) => c.method === "POST").map((c) => c.path)).toEqual(["/api/v1/users/invitations/inv1/link"]);
  expect(r.guarded).toBe(1);
  expect(written).toEqual([URL_]);
  expect(r.notice).toContain("A new invitation link for pat@acme.test is on your clipboard.");
  expect(r.notice).toContain("The link sent or copied before no longer works.");
  expect(r.field.value).toBe(URL_);
  expect(r.field.readOnly).toBe(true);
});

test("without a clipboard (or refused) the link is shown to copy by hand", async () => {
  for (const clipboard of [undefined, { writeText: async () => Promise.reject(new Error("NotAllowedError")) }]) {
    const r = await copyWith(clipboard);
    expect(r.notice).toContain("Copy this new invitation link for pat@acme.test.");
    expect(r.notice).not.toContain("on your clipboard");
    expect(r.field.value).toBe(URL_);
    render(null, root);
    root.remove();
    restore();
  }
  root = document.createElement("div");
});
