/** Display formats shared by every screen. */
import { describeUserAgent } from "../../src/kernel/user-agent";

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

/** "Chrome on Linux" from a user agent (the same words as the new-device mail): enough to tell one's own devices apart. */
export function device(ua: string | null): string {
  if (!ua) return "Unknown device";
  const words = describeUserAgent(ua);
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const DAY = 86_400_000;
/** Whole days in the current stage since `iso`: "In this stage since today", "1 day in this stage", "12 days in this stage". */
export function daysInStage(iso: string, now = Date.now()): string {
  const days = Math.max(0, Math.floor((now - Date.parse(iso)) / DAY));
  return days === 0 ? "In this stage since today" : days === 1 ? "1 day in this stage" : `${days} days in this stage`;
}
