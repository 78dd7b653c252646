import { afterEach, describe, expect, test } from "bun:test";
import { fakeFetch, json, registerDom, until } from "./dom";

registerDom("http://acme.localhost:8000/sign-in");
const { h, render } = await import("preact");
const { setConfig } = await import("../../../web/shared/config");
const { default: SignIn } = await import("../../../web/sign-in");
const { TwoFactor } = await import("../../../web/account/two-factor");
const { Field } = await import("../../../web/shared/field");
const { Pager } = await import("../../../web/shared/pager");
const { stopRefresh } = await import("../../../web/api/client");

setConfig({ baseDomain: "localhost", sharedCookies: false, smtp: true, signup: "open" });
let root: HTMLElement;
const mount = (vnode: import("preact").ComponentChild) => {
  root = document.createElement("div");
  document.body.appendChild(root);
  render(vnode, root);
};
afterEach(() => {
  render(null, root);
  root.remove();
  stopRefresh();
});

/** The control whose <label> says `text`. */
function byLabel(text: string): HTMLInputElement {
  const label = [...root.querySelectorAll("label")].find((l) => l.textContent === text);
  if (!label) throw new Error(`no label ${text}`);
  return root.querySelector(`#${CSS.escape(label.getAttribute("for")!)}`) as HTMLInputElement;
}
/** Types into a field, then lets Preact re-render (a button enabled by the value is then live). */
async function type(input: HTMLInputElement, value: string) {
  input.value = value;
  input.dispatchEvent(new window.Event("input", { bubbles: true }) as unknown as Event);
  await new Promise((r) => setTimeout(r, 0));
}
const button = (name: string) => {
  const b = [...root.querySelectorAll("button")].find((x) => x.textContent?.trim() === name);
  if (!b) throw new Error(`no button ${name}`);
  return b as HTMLButtonElement;
};
const text = () => root.textContent ?? "";

describe("shared components", () => {
  test("a field: visible label tied to its input, its error beside it and announced", () => {
    mount(h(Field, { label: "Title", value: "", onValue: () => {}, error: "Field required" }));
    const input = byLabel("Title");
    expect(input.getAttribute("aria-invalid")).toBe("true");
    const err = root.querySelector(`#${CSS.escape(input.getAttribute("aria-describedby")!)}`)!;
    expect(err.textContent).toBe("Field required");
  });

  test("the pager: total, page of pages, buttons disabled at the ends", () => {
    const pages: number[] = [];
    mount(h(Pager, { page: 1, pages: 3, total: 41, size: 20, noun: "deals", onPage: (p: number) => pages.push(p) }));
    expect(text()).toContain("41 deals");
    expect(text()).toContain("Page 1 of 3");
    expect(button("Previous").disabled).toBe(true);
    button("Next").click();
    expect(pages).toEqual([2]);
  });
});

describe("sign in", () => {
  test("wrong credentials are said plainly; with 2FA on, the code step follows and signs in", async () => {
    let attempts = 0;
    const f = fakeFetch({
      "POST /api/v1/auth/login": () =>
        ++attempts === 1 ? json(401, { detail: "Incorrect email or password.", code: "invalid_credentials" }) : json(200, { requires_2fa: true, temp_token: "tmp" }),
      "POST /api/v1/auth/2fa/verify": (c) =>
        (c.body as { code: string }).code === "123456"
          ? json(200, { access_token: "a", refresh_token: "r", token_type: "bearer" })
          : json(401, { detail: "Invalid code.", code: "invalid_2fa_code" }),
    });
    try {
      mount(h(SignIn, {}));
      await type(byLabel("Email"), "sam@acme.test");
      await type(byLabel("Password"), "nope");
      button("Sign in").click();
      await until(() => expect(text()).toContain("Wrong email or password."));

      await type(byLabel("Password"), "right one");
      button("Sign in").click();
      await until(() => expect(text()).toContain("Two-step verification"));
      await type(byLabel("Code"), "000000");
      button("Verify").click();
      await until(() => expect(text()).toContain("That code is not valid."));
      await type(byLabel("Code"), "123456");
      button("Verify").click();
      await until(() => expect(location.pathname).toBe("/deals"));
      expect(f.calls.find((c) => c.path === "/api/v1/auth/2fa/verify")!.body).toEqual({ temp_token: "tmp", code: "000000" });
    } finally {
      f.restore();
    }
  });

  test("a rate limit shows the wait from Retry-After", async () => {
    const f = fakeFetch({ "POST /api/v1/auth/login": () => json(429, { detail: "Too many attempts.", code: "rate_limited" }, { "retry-after": "42" }) });
    try {
      history.replaceState(null, "", "/sign-in");
      mount(h(SignIn, {}));
      await type(byLabel("Email"), "sam@acme.test");
      await type(byLabel("Password"), "x");
      button("Sign in").click();
      await until(() => expect(text()).toContain("Too many attempts. Try again in 42 seconds."));
    } finally {
      f.restore();
    }
  });
});

describe("two-step setup and step-up", () => {
  test("reauthentication_required: the password is asked, renewed, and the setup retried", async () => {
    let proven = false;
    const f = fakeFetch({
      "GET /api/v1/auth/2fa/status": () => json(200, { enabled: false, pending: false, backup_codes_remaining: 0 }),
      "POST /api/v1/auth/2fa/setup": () =>
        proven
          ? json(200, { secret: "JBSWY3DPEHPK3PXP", otpauth_url: "otpauth://totp/Suite:sam%40acme.test?secret=JBSWY3DPEHPK3PXP&issuer=Suite", backup_codes: ["aaaa-bbbb", "cccc-dddd"] })
          : json(403, { detail: "Confirm your password first.", code: "reauthentication_required" }),
      "POST /api/v1/auth/reauthenticate": (c) => {
        if ((c.body as { password: string }).password !== "pw-right") return json(401, { detail: "Incorrect password.", code: "invalid_credentials" });
        proven = true;
        return json(200, { detail: "ok" });
      },
    });
    try {
      mount(h(TwoFactor, {}));
      await until(() => button("Set up two-step verification"));
      button("Set up two-step verification").click();
      await until(() => expect(text()).toContain("enter your password again"));
      await type(byLabel("Password"), "pw-wrong");
      button("Confirm").click();
      await until(() => expect(text()).toContain("That password (or code) is not right."));
      await type(byLabel("Password"), "pw-right");
      button("Confirm").click();
      await until(() => expect(root.querySelector("svg.qr path")).not.toBeNull());
      expect(root.querySelector("code.secret")!.textContent).toBe("JBSWY3DPEHPK3PXP");
      expect(root.querySelector('svg.qr')!.getAttribute("aria-label")).toBe("QR code for your authenticator app");
      expect([...root.querySelectorAll("ul.codes li")].map((li) => li.textContent)).toEqual(["aaaa-bbbb", "cccc-dddd"]);
      expect(f.calls.filter((c) => c.path === "/api/v1/auth/2fa/setup").length).toBe(2);
      // No remote image: the QR code is an inline SVG.
      expect(root.querySelector("img")).toBeNull();
    } finally {
      f.restore();
    }
  });
});
