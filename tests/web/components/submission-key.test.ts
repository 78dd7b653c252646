import { expect, test } from "bun:test";
import { submissionDone, submissionKey } from "../../../web/api/submission-key";

/** The web app's Idempotency-Key per form submission (issue 28 item 6). */
test("the same body on the same path keeps its key until the submission is done; another body or path gets another", () => {
  const first = submissionKey("/crm/deals", { title: "A", account_id: "x" });
  expect(first).toMatch(/^[0-9a-f]{32}$/);
  expect(submissionKey("/crm/deals", { title: "A", account_id: "x" })).toBe(first); // a double click, a retry
  expect(submissionKey("/crm/accounts", { title: "A", account_id: "x" })).not.toBe(first); // another form
  const edited = submissionKey("/crm/deals", { title: "B", account_id: "x" });
  expect(edited).not.toBe(first); // the person changed the form: a new submission
  submissionDone("/crm/deals", first); // an older submission's answer does not end the current one
  expect(submissionKey("/crm/deals", { title: "B", account_id: "x" })).toBe(edited);
  submissionDone("/crm/deals", edited);
  expect(submissionKey("/crm/deals", { title: "B", account_id: "x" })).not.toBe(edited); // after a success: a new key
});
