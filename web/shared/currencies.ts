import { ISO_4217_CODES } from "../../src/kernel/currency-codes";

/**
 * The currencies a deal may be in: ISO 4217 codes, the server's own list (src/kernel/currency-codes.ts). The
 * names come from the browser (Intl.DisplayNames), so the list costs a few hundred bytes.
 */
export const COMMON_CURRENCIES = ["USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "NZD", "CNY", "INR", "BRL", "MXN", "SEK", "NOK", "DKK", "PLN", "ZAR", "SGD", "HKD"];

export const ISO_4217 = ISO_4217_CODES;

let names: Intl.DisplayNames | null | undefined;
const labels = new Map<string, string>();
/** "EUR — Euro", in the browser's language; the code alone where the browser knows no name. Worked out once per code (the form renders per keystroke). */
export function currencyLabel(code: string): string {
  const known = labels.get(code);
  if (known) return known;
  if (names === undefined) {
    try {
      names = new Intl.DisplayNames([navigator.language || "en"], { type: "currency" });
    } catch {
      names = null;
    }
  }
  let name: string | undefined;
  try {
    name = names?.of(code);
  } catch {
    name = undefined;
  }
  const label = name && name !== code ? `${code} — ${name}` : code;
  labels.set(code, label);
  return label;
}
