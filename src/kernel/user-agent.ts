/**
 * A user agent in words, for people: the new-device mail and the web app's sessions list and
 * security log (web/shared/format.ts imports this file, so both say the same). Pure: no Bun, no DOM.
 */

/** The browser and system a user agent names, in words ("Firefox on Windows"); never the raw string's junk. */
export function describeUserAgent(ua: string | null): string {
  if (!ua) return "an unknown browser or program (it sent no user agent)";
  const browser =
    /Edg(?:e|A|iOS)?\//.test(ua) ? "Edge"
    : /OPR\/|Opera/.test(ua) ? "Opera"
    : /Firefox\/|FxiOS\//.test(ua) ? "Firefox"
    : /Chrome\/|CriOS\/|Chromium\//.test(ua) ? "Chrome"
    : /Safari\//.test(ua) && /Version\//.test(ua) ? "Safari"
    : /^curl\//i.test(ua) ? "curl"
    : /^Wget\//i.test(ua) ? "Wget"
    : /python-requests|aiohttp|httpx|urllib/i.test(ua) ? "a Python program"
    : /^(?:node|undici|axios|Bun)\b/i.test(ua) ? "a JavaScript program"
    : /^Go-http-client/i.test(ua) ? "a Go program"
    : "an unrecognised browser or program";
  const system =
    /iPhone|iPad|iPod/.test(ua) ? "iOS"
    : /Android/.test(ua) ? "Android"
    : /CrOS/.test(ua) ? "ChromeOS"
    : /Windows/.test(ua) ? "Windows"
    : /Mac OS X|Macintosh/.test(ua) ? "macOS"
    : /Linux|X11/.test(ua) ? "Linux"
    : null;
  return system ? `${browser} on ${system}` : browser;
}
