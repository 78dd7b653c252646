import { afterAll, beforeAll, expect, test } from "bun:test";
import { type OidcWorld, oidcWorld, signInVia } from "../../support/oidc-world";
import { FIREFOX, noticeMails } from "./support";

/** A sign-in through an organization's identity provider goes through the new-device check too (issue 33.2). */

/** What a browser's navigation carries (the callback is one): Sec-Fetch-Mode says "browser". */
const NAVIGATION = { "sec-fetch-mode": "navigate", "user-agent": FIREFOX };

let w: OidcWorld;
beforeAll(async () => {
  w = await oidcWorld({ SUITE_NEW_DEVICE_MAIL: "true" });
});
afterAll(async () => {
  await w.close();
});

test("an identity-provider sign-in from a new device is mailed, naming the provider; the same browser again is not", async () => {
  w.op.accounts.set("traveller", { email: "traveller@example.com", email_verified: true });
  const browser = w.browser();
  const first = await signInVia(browser, "acme", w.providerA.id, "traveller", NAVIGATION);
  expect(first.status).toBe(302);
  const mails = (await noticeMails(w.t)).filter((m) => m.recipient === "traveller@example.com");
  expect(mails).toHaveLength(1);
  expect(mails[0]!.text_body).toContain(`Signed in with: the identity provider ${w.providerA.name}.`);
  // The callback set the device cookie; the browser sends it at its next sign-in.
  expect(first.headers.getSetCookie().some((c) => c.startsWith(`svc_device_${w.acme.tenant.id}=`))).toBe(true);
  w.clock.advance(60_000);
  const second = await signInVia(browser, "acme", w.providerA.id, "traveller", NAVIGATION);
  expect(second.status).toBe(302);
  expect((await noticeMails(w.t)).filter((m) => m.recipient === "traveller@example.com")).toHaveLength(1);
}, 30_000);
