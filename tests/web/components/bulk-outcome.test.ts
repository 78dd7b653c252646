import { describe, expect, test } from "bun:test";
import type { ImportJob } from "../../../web/api/client";
import { bulkOutcome } from "../../../web/deals/bulk-bar";

// What the deals screen says when a bulk change or its undo ends: a sentence from the job's counts and request.

const job = (o: Partial<ImportJob>): ImportJob => ({
  id: "j", kind: "deals_bulk", status: "succeeded", total: 3, done: 3, added: 0, updated: 3, unchanged: 0, error_count: 0, errors: [], message: null,
  created_at: "2026-11-28T00:00:00.000Z", finished_at: "2026-11-28T00:00:01.000Z", bulk: null, ...o,
});
const bulk = (b: Partial<NonNullable<ImportJob["bulk"]>>) => ({ action: "change" as const, set: null, undo_of: null, undone_by: null, undo_until: null, ...b });
const stage = (k: string) => ({ won: "Won" })[k] ?? k;
const person = (id: string | null) => (id === null ? "nobody" : id === "me" ? "you" : "Zed");

describe("a bulk change's result", () => {
  test("stage, assignee, both, delete; deals already so are said", () => {
    expect(bulkOutcome(job({ bulk: bulk({ set: { stage: "won" } }) }), stage, person)).toBe("Moved 3 deals to Won.");
    expect(bulkOutcome(job({ updated: 1, unchanged: 2, bulk: bulk({ set: { assigned_to: null } }) }), stage, person)).toBe("Assigned 1 deal to nobody (2 deals already so, or gone).");
    expect(bulkOutcome(job({ bulk: bulk({ set: { stage: "won", assigned_to: "me" } }) }), stage, person)).toBe("Moved 3 deals to Won and assigned them to you.");
    expect(bulkOutcome(job({ updated: 1200, bulk: bulk({ action: "delete" }) }), stage, person)).toBe("Deleted 1,200 deals.");
  });
  test("an undo: put back, brought back, left alone", () => {
    const undo = (o: Partial<ImportJob>) => job({ kind: "deals_bulk_undo", updated: 0, bulk: bulk({ action: "undo", undo_of: "j0" }), ...o });
    expect(bulkOutcome(undo({ updated: 2, unchanged: 1 }), stage, person)).toBe("Undone: 2 deals put back as they were, 1 deal left alone because someone changed them since.");
    expect(bulkOutcome(undo({ added: 5 }), stage, person)).toBe("Undone: 5 deals brought back.");
    expect(bulkOutcome(undo({}), stage, person)).toBe("Undone. There was nothing left to put back.");
  });
});
