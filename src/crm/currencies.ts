import { registerFormat } from "../kernel/validation";

/**
 * The ISO 4217 currency codes a deal may hold (the active list, funds and metals included).
 * A three-letter text that is no currency ("DOL") is refused rather than stored: amounts in an
 * unknown unit cannot be summed or converted. web/shared/currencies.ts holds the same list
 * (tests/web/components/currencies.test.ts checks that the two agree).
 */
export const ISO_4217 = new Set(
  (
    "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN BWP BYN BZD " +
    "CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL " +
    "GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD " +
    "KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR " +
    "NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN " +
    "SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XAG " +
    "XAU XBA XBB XBC XBD XCD XCG XDR XOF XPD XPF XPT XSU XTS XUA XXX YER ZAR ZMW ZWG ZWL"
  ).split(" "),
);

export const CURRENCY_MESSAGE = "Value error, currency must be an ISO 4217 currency code such as USD, EUR or GBP";
registerFormat("currency", (v) => ISO_4217.has(v), CURRENCY_MESSAGE);
