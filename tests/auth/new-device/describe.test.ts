import { expect, test } from "bun:test";
import { describeMethod, describeTime } from "../../../src/auth/new-device/mail";
import { describeUserAgent } from "../../../src/kernel/user-agent";

/** What the new-device mail says about a sign-in, in words. */

test("browser and system, from common user agents", () => {
  const cases: Array<[string | null, string]> = [
    ["Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0", "Edge on Windows"],
    ["Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15", "Safari on macOS"],
    ["Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36", "Chrome on Android"],
    ["Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", "Firefox on Linux"],
    ["Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/126.0 Mobile/15E148 Safari/604.1", "Chrome on iOS"],
    ["curl/8.5.0", "curl"],
    ["python-requests/2.32.3", "a Python program"],
    ["something-else/1.0", "an unrecognised browser or program"],
    [null, "an unknown browser or program (it sent no user agent)"],
  ];
  for (const [ua, said] of cases) expect(describeUserAgent(ua)).toBe(said);
});

test("the way in, and the time with its zone", () => {
  expect(describeMethod("password")).toBe("password");
  expect(describeMethod("password+2fa")).toBe("password and a two-factor code");
  expect(describeMethod("magic_link+2fa")).toBe("a link mailed to you and a two-factor code");
  expect(describeMethod("oidc:Google")).toBe("the identity provider Google");
  expect(describeMethod("passkey")).toBe("a passkey");
  expect(describeTime(Date.UTC(2026, 10, 27, 17, 40))).toBe("27 November 2026 at 17:40 UTC");
});
