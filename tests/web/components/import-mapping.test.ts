import { describe, expect, test } from "bun:test";
import { delimiterOf, guessField, headerCells, mappingProblem } from "../../../web/import/mapping";

// The import screen's mapping step: the header read as the server reads it (the separator is the
// header line's most frequent of , ; tab), each column prefilled with the field its name says.

describe("the header of a chosen file", () => {
  test.each([
    ["title,account_name,value\r\nx,y,1\r\n", ["title", "account_name", "value"]],
    ["\uFEFFDeal name;Company;Amount\nA;B;1,5\n", ["Deal name", "Company", "Amount"]],
    ["a\tb\tc\n", ["a", "b", "c"]],
    ['"Name; with semicolon",Company,"Say ""hi"""\n', ["Name; with semicolon", "Company", 'Say "hi"']],
    ["", []],
  ])("%p → %p", (text, cells) => expect(headerCells(text)).toEqual(cells));

  test("a tie or no separator is a comma", () => {
    expect(delimiterOf("a;b,c")).toBe(",");
    expect(delimiterOf("single")).toBe(",");
    expect(delimiterOf("a;b;c,d")).toBe(";");
  });
});

describe("prefilled by name", () => {
  test("exact names in any case and spacing, and common synonyms; anything else is ignored", () => {
    expect(["Title", "Account Name", "Company", "Amount", "Close date", "Owner", "Internal code", "created_at"].map((h) => guessField(h, "deals"))).toEqual([
      "title", "account_name", "account_name", "value", "close_date", "assignee_email", "", "",
    ]);
    expect(["Company", "Website"].map((h) => guessField(h, "accounts"))).toEqual(["name", "domain"]);
    expect(["First name", "Surname", "E-mail"].map((h) => guessField(h, "contacts"))).toEqual(["first_name", "last_name", "email"]);
  });

  test("a mapping without a required field, or with one twice, says so in a sentence", () => {
    expect(mappingProblem(["title", "account_name", ""], "deals")).toBeNull();
    expect(mappingProblem(["title", "", ""], "deals")).toBe("Choose a column for Account (by name): every row needs it.");
    expect(mappingProblem(["title", "title", "account_name"], "deals")).toBe("Two columns are read as Title: choose it for one column only.");
  });
});
