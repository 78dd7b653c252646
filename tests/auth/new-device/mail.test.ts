import { afterEach, describe, expect, test } from "bun:test";
import type { TestApp } from "../../helpers";
import { setCookies } from "../../helpers";
import { allAudit } from "../support";
import { invited } from "../../team/support";
import { VERIFY, enable } from "../two-factor/support";
import { appCode } from "../two-factor/rfc6238";
import { FIREFOX, SAFARI_IPHONE, browser, client, cookieHeader, deviceCookieOf, newDeviceApp, noticeMails } from "./support";

/**
 * The new-device mail (issue 33.2): a sign-in from a browser without the organization's device
 * cookie mails the account (when, browser and system, IP, method, a "this wasn't me" link); a
 * client that is no browser, once per IP and user agent per 30 days. Every sign-in method.
 */

const apps: TestApp[] = [];
afterEach(() => {
  for (const t of apps.splice(0)) t.close();
});
const LOGIN = "/api/v1/auth/login";

describe("a sign-in from a new browser", () => {
  test("mails the account when, browser and system, IP, method and the link; sets a long-lived device cookie; the same browser again is quiet", async () => {
    const { t, clock } = newDeviceApp(apps);
    const org = await t.signup("acme");
    clock.advance(60_000);
    const first = await t.json("POST", LOGIN, { body: { email: org.email, password: org.password }, tenant: "acme", headers: browser("203.0.113.9", FIREFOX) });
    expect(first.status).toBe(200);
    const device = deviceCookieOf(first.res, org.tenant.id);
    const [mail, ...more] = await noticeMails(t);
    expect(more).toHaveLength(0);
    expect(mail!.recipient).toBe(org.email);
    expect(mail!.subject).toBe("New sign-in to Org acme");
    for (const body of [mail!.text_body, mail!.html_body]) {
      expect(body).toContain("1 January 2030 at 00:01 UTC");
      expect(body).toContain("Firefox on Windows");
      expect(body).toContain("203.0.113.9");
      expect(body).toContain("Signed in with: password.");
    }
    expect(mail!.link).toStartWith("http://acme.localhost:8000/not-me#token=");
    expect(mail!.text_body).toContain(mail!.link);
    const audit = (await allAudit(t)).filter((a) => a.action === "login.new_device");
    expect(audit).toHaveLength(1);
    expect(JSON.parse(String(audit[0]!.detail))).toMatchObject({ method: "password", browser: true });

    // The same browser (its cookie) again, from anywhere: no mail; the cookie is set again (its 400 days start over).
    clock.advance(86_400_000);
    const again = await t.json("POST", LOGIN, { body: { email: org.email, password: org.password }, tenant: "acme", headers: { ...browser("192.0.2.50"), ...cookieHeader(org.tenant.id, device) } });
    expect(again.status).toBe(200);
    expect(deviceCookieOf(again.res, org.tenant.id)).toBe(device);
    expect(await noticeMails(t)).toHaveLength(1);
    // Signing out does not forget the device.
    await t.json("POST", "/api/v1/auth/logout-all", { token: again.body.access_token });
    await t.json("POST", LOGIN, { body: { email: org.email, password: org.password }, tenant: "acme", headers: { ...browser(), ...cookieHeader(org.tenant.id, device) } });
    expect(await noticeMails(t)).toHaveLength(1);
  });

  test("the browser that signed up, or joined by invitation, is known: no mail at its next sign-in", async () => {
    const { t, clock } = newDeviceApp(apps);
    const signup = await t.json("POST", "/api/v1/auth/signup", { body: { email: "founder@known.test", password: "zq-7 otter lamp mile", tenant_name: "Known", subdomain: "known" }, headers: browser() });
    expect(signup.status).toBe(201);
    const device = deviceCookieOf(signup.res, signup.body.tenant.id);
    clock.advance(60_000);
    const r = await t.json("POST", LOGIN, { body: { email: "founder@known.test", password: "zq-7 otter lamp mile" }, tenant: "known", headers: { ...browser(), ...cookieHeader(signup.body.tenant.id, device) } });
    expect(r.status).toBe(200);
    // Joined by invitation, in a browser: known too.
    const { token } = await invited(t, { ...signup.body, access_token: r.body.access_token, subdomain: "known" }, "joiner@known.test");
    clock.advance(60_000);
    const joined = await t.json("POST", "/api/v1/auth/invitations/accept", { body: { token, password: "zq-7 otter lamp mile" }, tenant: "known", headers: browser() });
    expect(joined.status).toBe(201);
    const joinedDevice = deviceCookieOf(joined.res, signup.body.tenant.id);
    clock.advance(60_000);
    const back = await t.json("POST", LOGIN, { body: { email: "joiner@known.test", password: "zq-7 otter lamp mile" }, tenant: "known", headers: { ...browser(), ...cookieHeader(signup.body.tenant.id, joinedDevice) } });
    expect(back.status).toBe(200);
    expect(await noticeMails(t)).toHaveLength(0);
  });

  test("a device cookie is per organization and per account: another's cookie, or a forged one, is a new device", async () => {
    const { t, clock } = newDeviceApp(apps);
    const acme = await t.signup("acme");
    const beta = await t.signup("beta");
    const inAcme = await t.json("POST", LOGIN, { body: { email: acme.email, password: acme.password }, tenant: "acme", headers: browser() });
    const acmeDevice = deviceCookieOf(inAcme.res, acme.tenant.id);
    expect(await noticeMails(t)).toHaveLength(1);
    clock.advance(1000);
    // acme's cookie sent under beta's name: unknown there.
    await t.json("POST", LOGIN, { body: { email: beta.email, password: beta.password }, tenant: "beta", headers: { ...browser(), ...cookieHeader(beta.tenant.id, acmeDevice) } });
    expect(await noticeMails(t)).toHaveLength(2);
    clock.advance(1000);
    await t.json("POST", LOGIN, { body: { email: acme.email, password: acme.password }, tenant: "acme", headers: { ...browser(), ...cookieHeader(acme.tenant.id, "x".repeat(43)) } });
    expect(await noticeMails(t)).toHaveLength(3);
  });

  test("SUITE_NEW_DEVICE_MAIL=false: no mail, for anyone; devices are still remembered", async () => {
    const { t } = newDeviceApp(apps, { SUITE_NEW_DEVICE_MAIL: "false" });
    const org = await t.signup("acme");
    const r = await t.json("POST", LOGIN, { body: { email: org.email, password: org.password }, tenant: "acme", headers: browser() });
    expect(r.status).toBe(200);
    deviceCookieOf(r.res, org.tenant.id);
    expect(await noticeMails(t)).toHaveLength(0);
    expect((await allAudit(t)).some((a) => a.action === "login.new_device")).toBe(false);
  });
});

describe("a client that is no browser and keeps no cookie", () => {
  test("is mailed about once per IP address and user agent per 30 days", async () => {
    const { t, clock } = newDeviceApp(apps);
    const org = await t.signup("acme");
    const signIn = (headers: Record<string, string>) => t.json("POST", LOGIN, { body: { email: org.email, password: org.password }, tenant: "acme", headers });
    const first = await signIn(client());
    expect(first.status).toBe(200);
    // Its answer is as before: the session's cookies, no device cookie.
    expect(Object.keys(setCookies(first.res)).sort()).toEqual(["svc_refresh", "svc_session"]);
    expect(await noticeMails(t)).toHaveLength(1);
    expect((await noticeMails(t))[0]!.text_body).toContain("Browser and system: curl.");
    clock.advance(86_400_000);
    await signIn(client());
    expect(await noticeMails(t)).toHaveLength(1);
    // Another user agent, or another address: new.
    clock.advance(1000);
    await signIn(client("198.51.100.7", "python-requests/2.32"));
    clock.advance(1000);
    await signIn(client("198.51.100.8"));
    expect(await noticeMails(t)).toHaveLength(3);
    // 30 days after its mail, the first one is new again.
    clock.advance(30 * 86_400_000);
    await signIn(client());
    expect(await noticeMails(t)).toHaveLength(4);
  });

  test("a browser from that same IP and user agent is still new without its cookie", async () => {
    const { t, clock } = newDeviceApp(apps);
    const org = await t.signup("acme");
    await t.json("POST", LOGIN, { body: { email: org.email, password: org.password }, tenant: "acme", headers: { ...client("203.0.113.9", SAFARI_IPHONE) } });
    clock.advance(1000);
    await t.json("POST", LOGIN, { body: { email: org.email, password: org.password }, tenant: "acme", headers: browser("203.0.113.9", SAFARI_IPHONE) });
    const mails = await noticeMails(t);
    expect(mails).toHaveLength(2);
    expect(mails[1]!.text_body).toContain("Safari on iOS");
  });
});

describe("every sign-in method goes through it", () => {
  test("magic link: mailed once the link is used, method named", async () => {
    const { t } = newDeviceApp(apps);
    const org = await t.signup("acme");
    await t.json("POST", "/api/v1/auth/magic-link", { body: { email: org.email }, tenant: "acme" });
    await t.ctx.magicLinks.settled();
    const link = (await t.ctx.repos.mail.list()).find((m) => m.kind === "magic_link")!.link!;
    const token = decodeURIComponent(new URL(link).hash.replace(/^#token=/, ""));
    const r = await t.json("POST", "/api/v1/auth/magic-verify", { body: { token }, tenant: "acme", headers: browser() });
    expect(r.status).toBe(200);
    deviceCookieOf(r.res, org.tenant.id);
    const [mail] = await noticeMails(t);
    expect(mail!.text_body).toContain("Signed in with: a link mailed to you.");
  });

  test("password and 2FA: no mail at the challenge, one after the second factor, naming both", async () => {
    const { t, clock } = newDeviceApp(apps);
    const org = await t.signup("acme");
    const { secret } = await enable(t, org.access_token);
    clock.advance(61_000);
    const first = await t.json("POST", LOGIN, { body: { email: org.email, password: org.password }, tenant: "acme", headers: browser() });
    expect(first.body.requires_2fa).toBe(true);
    expect(setCookies(first.res)).toEqual({});
    expect(await noticeMails(t)).toHaveLength(0);
    const r = await t.json("POST", VERIFY, { body: { temp_token: first.body.temp_token, code: appCode(secret, t.ctx.now()) }, tenant: "acme", headers: browser() });
    expect(r.status).toBe(200);
    deviceCookieOf(r.res, org.tenant.id);
    const [mail, ...more] = await noticeMails(t);
    expect(more).toHaveLength(0);
    expect(mail!.text_body).toContain("Signed in with: password and a two-factor code.");
  });
});
