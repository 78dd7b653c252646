import { describe, expect, test } from "bun:test";
import { pieces } from "../../../web/deal-page/linked-text";

describe("links in a note", () => {
  test("http and https addresses become links; closing punctuation stays text", () => {
    expect(pieces("See https://example.com/a?b=1, and http://x.test/p).")).toEqual([
      { text: "See " },
      { href: "https://example.com/a?b=1", text: "https://example.com/a?b=1" },
      { text: ", and " },
      { href: "http://x.test/p", text: "http://x.test/p" },
      { text: ")." },
    ]);
  });

  test("nothing else becomes a link: script, data and mail addresses, markup", () => {
    for (const text of ["javascript:alert(1)", "data:text/html,<b>x</b>", "mailto:a@b.test", "<a href=\"https://x.test\">x</a>".replace("https://", "ftp://")]) {
      expect(pieces(text).every((p) => !("href" in p))).toBe(true);
    }
    // A quote or angle bracket ends an address: no attribute can be smuggled in.
    expect(pieces('https://x.test/"onmouseover="x')).toEqual([{ href: "https://x.test/", text: "https://x.test/" }, { text: '"onmouseover="x' }]);
  });
});
