import { registerFormat } from "../kernel/validation";
import { ISO_4217_CODES } from "../kernel/currency-codes";

/**
 * The ISO 4217 currency codes a deal may hold (the active list, funds and metals included).
 * A three-letter text that is no currency ("DOL") is refused rather than stored: amounts in an
 * unknown unit cannot be summed or converted. The web app's picker reads the same list
 * (src/kernel/currency-codes.ts).
 */
export const ISO_4217 = new Set(ISO_4217_CODES);

export const CURRENCY_MESSAGE = "Value error, currency must be an ISO 4217 currency code such as USD, EUR or GBP";
registerFormat("currency", (v) => ISO_4217.has(v), CURRENCY_MESSAGE);
