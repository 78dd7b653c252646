/** Display formats shared by every screen. */

const moneyFormats = new Map<string, Intl.NumberFormat>();

/** "1234.50" in "EUR" → "€1,234.50" (the value is decimal text: never through a float for sums). */
export function money(value: string | number, currency = "USD"): string {
  let f = moneyFormats.get(currency);
  if (!f) {
    try {
      f = new Intl.NumberFormat(undefined, { style: "currency", currency });
    } catch {
      // An unknown currency code still shows its amount.
      f = new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    }
    moneyFormats.set(currency, f);
  }
  const n = typeof value === "number" ? value : Number(value);
  return Number.isFinite(n) ? f.format(n) : String(value);
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeZone: "UTC" });

export const formatDateTime = (iso: string | null | undefined): string => (iso ? dateTime.format(new Date(iso)) : "—");
/** A calendar date ("2026-03-01") shown as such, whatever the viewer's time zone. */
export const formatDate = (date: string | null | undefined): string => (date ? dateOnly.format(new Date(`${date}T00:00:00Z`)) : "—");

/** "Chrome on Linux" from a user agent: enough to tell one's own devices apart. */
export function device(ua: string | null): string {
  if (!ua) return "Unknown device";
  const browser = /Edg\//.test(ua) ? "Edge" : /Firefox\//.test(ua) ? "Firefox" : /Chrom(e|ium)\//.test(ua) ? "Chrome" : /Safari\//.test(ua) ? "Safari" : /curl|bun|node/i.test(ua) ? "Script" : "Browser";
  const os = /Android/.test(ua) ? "Android" : /iPhone|iPad/.test(ua) ? "iOS" : /Mac OS X/.test(ua) ? "macOS" : /Windows/.test(ua) ? "Windows" : /Linux/.test(ua) ? "Linux" : "";
  return os ? `${browser} on ${os}` : browser;
}
