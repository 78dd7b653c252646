/**
 * Helpers for the sign-in-provider screens' component tests (issue 17), on top of dom.ts: mount a
 * screen (as an admin), find controls as a user would (by label, by button text), type.
 * Import after registerDom (it reads the DOM globals lazily).
 */
import type { ComponentChild } from "preact";

export function screenKit(h: typeof import("preact").h, render: typeof import("preact").render, SessionContext: import("preact").Context<unknown>) {
  let root: HTMLElement;
  const tenant = { id: "t1", name: "Acme", subdomain: "acme", modules: ["crm", "users"], created_at: "2030-01-01T00:00:00Z" };
  const user = { id: "me", tenant_id: "t1", email: "me@acme.test", full_name: "Me", role: "admin", profile_id: null, created_at: "2030-01-01T00:00:00Z" };
  return {
    /** `me` adds to (or replaces parts of) the signed-in user's /auth/me answer, e.g. `{ has_password: false }`. */
    mount(vnode: ComponentChild, me: Record<string, unknown> = {}) {
      root = document.createElement("div");
      document.body.appendChild(root);
      render(h(SessionContext.Provider, { value: { me: { user, tenant, has_password: true, ...me }, reload: async () => null, signOut: async () => {} } }, vnode), root);
    },
    unmount() {
      if (!root) return;
      render(null, root);
      root.remove();
    },
    root: () => root,
    text: () => root.textContent ?? "",
    /** The control whose <label> says `text` (the label's own text, a checkbox's span included). */
    byLabel(text: string): HTMLInputElement {
      const label = [...root.querySelectorAll("label")].find((l) => l.textContent?.trim() === text);
      if (!label) throw new Error(`no label ${text}`);
      const id = label.getAttribute("for");
      return (id ? root.querySelector(`#${CSS.escape(id)}`) : label.querySelector("input")) as HTMLInputElement;
    },
    maybeLabel: (text: string) => [...root.querySelectorAll("label")].some((l) => l.textContent?.trim() === text),
    /** The button a user reads `name` on; `submit` picks a form's submit button of that name. */
    button(name: string, submit = false): HTMLButtonElement {
      const b = [...root.querySelectorAll("button")].find((x) => x.textContent?.trim() === name && (!submit || x.getAttribute("type") === "submit"));
      if (!b) throw new Error(`no button ${name}`);
      return b as HTMLButtonElement;
    },
  };
}

export const tick = () => new Promise((r) => setTimeout(r, 0));

/** Types into a field as a user does, then lets Preact re-render. */
export async function type(input: HTMLInputElement, value: string) {
  input.value = value;
  input.dispatchEvent(new window.Event("input", { bubbles: true }) as unknown as Event);
  await tick();
}

/** Picks an option of a <select>. */
export async function choose(select: HTMLSelectElement, value: string) {
  select.value = value;
  select.dispatchEvent(new window.Event("change", { bubbles: true }) as unknown as Event);
  await tick();
}

/** Ticks a checkbox (a click, as a user does). */
export async function toggle(input: HTMLInputElement) {
  input.click();
  await tick();
}
