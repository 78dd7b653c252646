/**
 * The currencies a deal may be in: ISO 4217 codes, the same list as the server's
 * (src/crm/currencies.ts; tests/web/components/currencies.test.ts checks that they agree). The
 * names come from the browser (Intl.DisplayNames), so the list costs a few hundred bytes.
 */
export const COMMON_CURRENCIES = ["USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "NZD", "CNY", "INR", "BRL", "MXN", "SEK", "NOK", "DKK", "PLN", "ZAR", "SGD", "HKD"];

export const ISO_4217 = (
  "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN BWP BYN BZD " +
  "CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL " +
  "GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD " +
  "KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR " +
  "NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN " +
  "SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XAG " +
  "XAU XBA XBB XBC XBD XCD XCG XDR XOF XPD XPF XPT XSU XTS XUA XXX YER ZAR ZMW ZWG ZWL"
).split(" ");

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
