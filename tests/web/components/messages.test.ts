import { describe, expect, test } from "bun:test";
import { plainMessage } from "../../../web/api/messages";

// What a person reads for each kind of 422 item: a sentence about the field, in the form's
// words, never the API's ("String should have at least 1 character", "Value error, …").

const item = (loc: (string | number)[], type: string, msg: string, ctx?: Record<string, unknown>) => ({ loc, type, msg, ctx });

describe("a 422 item as a sentence", () => {
  test.each([
    [item(["body", "account_id"], "string_too_short", "String should have at least 1 character", { min_length: 1 }), "Choose an account."],
    [item(["body", "title"], "missing", "Field required"), "Enter a title."],
    [item(["body", "title"], "string_too_long", "String should have at most 200 characters", { max_length: 200 }), "Title can have at most 200 characters."],
    [item(["body", "password"], "string_too_short", "String should have at least 8 characters", { min_length: 8 }), "Password needs at least 8 characters."],
    [
      item(["body", "value"], "value_error", "Value error, value must be an amount written like 1234.50: digits, a point (not a comma) before at most 2 decimals, never negative"),
      "Value must be an amount written like 1234.50: digits, a point (not a comma) before at most 2 decimals, never negative.",
    ],
    [item(["body", "currency"], "string_pattern_mismatch", "String should match pattern '^[A-Z]{3}$'"), "Choose a currency from the list."],
    [item(["body", "currency"], "value_error", "Value error, currency must be an ISO 4217 currency code such as USD, EUR or GBP"), "Currency must be an ISO 4217 currency code such as USD, EUR or GBP."],
    [item(["body", "probability"], "less_than_equal", "Input should be less than or equal to 100", { le: 100 }), "Probability must be 100 or less."],
    [item(["body", "probability"], "int_parsing", "Input should be a valid integer, unable to parse string as an integer"), "Probability must be a whole number."],
    [item(["body", "stage"], "literal_error", "Input should be 'new' or 'won'", { expected: "'new' or 'won'" }), "Choose a stage from the list."],
    [item(["body", "close_date"], "value_error", "Input should be a valid date in the format YYYY-MM-DD"), "Enter a close date as a date, e.g. 2030-06-30."],
    [item(["body", "custom_data"], "dict_type", "Input should be a valid dictionary"), "Check the custom data."],
    [item(["body", 3, "account_name"], "csv_row_invalid", 'No account is named "Globex". Check the name, or import with missing accounts and contacts created.'), 'No account is named "Globex". Check the name, or import with missing accounts and contacts created.'],
  ])("%j → %p", (i, sentence) => expect(plainMessage(i)).toBe(sentence));

  test("no sentence carries the API's wording", () => {
    for (const type of ["missing", "string_too_short", "string_pattern_mismatch", "int_from_float", "dict_type", "value_error", "extra_forbidden", "model_attributes_type"]) {
      const s = plainMessage(item(["body", "notes"], type, "Input should be whatever", { min_length: 1 }));
      expect(s).not.toMatch(/Input should|String should|Value error|create_missing|body\./);
      expect(s).toMatch(/^[A-Z].*\.$/);
    }
  });
});

