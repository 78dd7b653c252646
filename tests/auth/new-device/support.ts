import { expect } from "bun:test";
import { DEVICE_COOKIE_PREFIX } from "../../../src/http/cookies";
import { type TestApp, setCookies } from "../../helpers";
import { clockedApp } from "../support";

export const NOT_ME = "/api/v1/auth/not-me";
export const FIREFOX = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0";
export const SAFARI_IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";

/** A browser's headers: Sec-Fetch-Mode says "browser"; the proxy's X-Forwarded-For gives the IP. */
export const browser = (ip = "203.0.113.9", ua = FIREFOX) => ({ "sec-fetch-mode": "cors", "user-agent": ua, "x-forwarded-for": ip });
/** An API client's: no Sec-Fetch-*, no cookie jar. */
export const client = (ip = "198.51.100.7", ua = "curl/8.5.0") => ({ "user-agent": ua, "x-forwarded-for": ip });

/** An app with the new-device mail on (the test default is off) and the client IP taken from X-Forwarded-For. */
export function newDeviceApp(apps: TestApp[], env: Record<string, string> = {}) {
  const o = clockedApp({ env: { SUITE_NEW_DEVICE_MAIL: "true", SUITE_TRUST_PROXY: "true", ...env } });
  apps.push(o.t);
  return o;
}

export interface NoticeMail {
  recipient: string;
  subject: string;
  text_body: string;
  html_body: string;
  link: string;
  tenant_id: string;
}

/** The new-device mails in the outbox, oldest first. */
export async function noticeMails(t: TestApp): Promise<NoticeMail[]> {
  const rows = (await t.ctx.repos.mail.list(1000)).filter((r) => r.kind === "new_device");
  return rows.reverse().map((r) => r as unknown as NoticeMail);
}

export const tokenOfLink = (link: string): string => decodeURIComponent(new URL(link).hash.replace(/^#token=/, ""));

/** The device cookie a sign-in's answer sets for `tenantId`: its value, after checking its attributes. */
export function deviceCookieOf(res: Response, tenantId: string): string {
  const c = setCookies(res)[`${DEVICE_COOKIE_PREFIX}${tenantId}`];
  expect(c).toBeDefined();
  expect(c!.attrs.httponly).toBe(true);
  expect(c!.attrs.path).toBe("/api/v1/auth");
  expect(String(c!.attrs.samesite).toLowerCase()).toBe("lax");
  expect(Number(c!.attrs["max-age"])).toBe(400 * 86400);
  return c!.value;
}

export const cookieHeader = (tenantId: string, value: string) => ({ cookie: `${DEVICE_COOKIE_PREFIX}${tenantId}=${value}` });
