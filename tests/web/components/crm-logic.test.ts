import { describe, expect, test } from "bun:test";
import { ApiError } from "../../../web/api/client";
import { dealBody } from "../../../web/deals/deal-form";
import { parseView, sortedBy, viewQuery, viewSearch } from "../../../web/deals/view";
import { formErrors } from "../../../web/shared/form-errors";
import { type Timers, debouncer, latestOnly } from "../../../web/shared/live-list";

// The deal list's logic without a DOM: the URL ⇄ view round trip, the debouncer, the latest
// answer winning, and a 422 split into the form's fields.

describe("the deal list's view lives in the URL", () => {
  test("every parameter survives a round trip, in the API's own names", () => {
    const url = "?view=board&search=acme+rollout&stage=won&stage=lost&assigned_to=u_1&sort_by=close_date&sort_dir=desc&page=3&size=50";
    const v = parseView(new URLSearchParams(url));
    expect(v).toEqual({
      mode: "board",
      search: "acme rollout",
      stages: ["won", "lost"],
      assignee: { kind: "user", id: "u_1" },
      sortBy: "close_date",
      sortDir: "desc",
      page: 3,
      size: 50,
    });
    expect(viewSearch(v)).toBe(url);
    expect(parseView(new URLSearchParams(viewSearch(v)))).toEqual(v);
    expect(viewQuery(v)).toEqual({ page: 3, size: 50, search: "acme rollout", stage: ["won", "lost"], assigned_to: "u_1", sort_by: "close_date", sort_dir: "desc" });
  });

  test("defaults stay out of the URL; mine and unassigned round-trip", () => {
    expect(viewSearch(parseView(new URLSearchParams("")))).toBe("");
    expect(viewSearch(parseView(new URLSearchParams("page=1&size=20")))).toBe("");
    for (const q of ["mine=1", "unassigned=1"]) expect(viewSearch(parseView(new URLSearchParams(q)))).toBe(`?${q}`);
    expect(viewQuery(parseView(new URLSearchParams("mine=true")))).toEqual({ page: 1, size: 20, mine: "true" });
    expect(viewQuery(parseView(new URLSearchParams("unassigned=yes")))).toEqual({ page: 1, size: 20, unassigned: "true" });
  });

  test("anything unreadable in a hand-edited URL falls back to its default instead of a 422", () => {
    const v = parseView(new URLSearchParams("page=0&size=500&sort_by=password&sort_dir=sideways&stage=&search=" + "x".repeat(300)));
    expect(v.page).toBe(1);
    expect(v.size).toBe(20);
    expect(v.sortBy).toBeNull();
    expect(v.sortDir).toBe("desc");
    expect(v.stages).toEqual([]);
    expect(v.search.length).toBe(200);
    expect(parseView(new URLSearchParams("sort_by=value")).sortDir).toBe("asc");
    expect(viewQuery(parseView(new URLSearchParams("search=%20%20")))).toEqual({ page: 1, size: 20 });
  });

  test("a header click sorts ascending, a second one descending, and goes back to page 1", () => {
    const v = parseView(new URLSearchParams("page=4"));
    const a = sortedBy(v, "value");
    expect([a.sortBy, a.sortDir, a.page]).toEqual(["value", "asc", 1]);
    const d = sortedBy(a, "value");
    expect([d.sortBy, d.sortDir]).toEqual(["value", "desc"]);
    expect(sortedBy(d, "value").sortDir).toBe("asc");
    // The default order is created_at, newest first: its header flips to ascending.
    expect(sortedBy(v, "created_at").sortDir).toBe("asc");
    expect(sortedBy(a, "title")).toMatchObject({ sortBy: "title", sortDir: "asc" });
  });
});

/** A clock the test moves by hand. */
function manualTimers() {
  let now = 0;
  let next = 1;
  const due = new Map<number, { at: number; f: () => void }>();
  const timers: Timers = {
    set: (f, ms) => {
      const id = next++;
      due.set(id, { at: now + ms, f });
      return id;
    },
    clear: (id) => void due.delete(id as number),
  };
  const advance = (ms: number) => {
    now += ms;
    for (const [id, t] of [...due].sort((a, b) => a[1].at - b[1].at)) {
      if (t.at <= now) {
        due.delete(id);
        t.f();
      }
    }
  };
  return { timers, advance, count: () => due.size };
}

describe("search as you type", () => {
  test("one call once typing pauses for 150 ms, with the last text", () => {
    const clock = manualTimers();
    const d = debouncer(150, clock.timers);
    const sent: string[] = [];
    for (const text of ["a", "ac", "acm", "acme"]) {
      d.schedule(() => sent.push(text));
      clock.advance(100);
    }
    expect(sent).toEqual([]);
    expect(clock.count()).toBe(1);
    clock.advance(50);
    expect(sent).toEqual(["acme"]);
    clock.advance(1000);
    expect(sent).toEqual(["acme"]);
  });

  test("Enter sends at once; a cancel sends nothing", () => {
    const clock = manualTimers();
    const d = debouncer(150, clock.timers);
    const sent: string[] = [];
    d.schedule(() => sent.push("now"));
    expect(d.pending).toBe(true);
    d.flush();
    expect(sent).toEqual(["now"]);
    expect(d.pending).toBe(false);
    d.schedule(() => sent.push("never"));
    d.cancel();
    clock.advance(500);
    expect(sent).toEqual(["now"]);
  });

  test("the latest call's answer wins whatever order the answers arrive in; older calls are aborted", async () => {
    const run = latestOnly();
    const answers: Record<string, (v: string) => void> = {};
    const signals: Record<string, AbortSignal> = {};
    const start = (q: string) =>
      run.run(
        (signal) =>
          new Promise<string>((resolve) => {
            signals[q] = signal;
            answers[q] = resolve;
          }),
      );
    const first = start("ac");
    const second = start("acme");
    expect(signals.ac!.aborted).toBe(true);
    expect(signals.acme!.aborted).toBe(false);
    answers.acme!("rows for acme");
    answers.ac!("rows for ac");
    expect(await second).toEqual({ ok: true, value: "rows for acme" });
    expect(await first).toEqual({ stale: true });
  });

  test("a failure of an overtaken call is not shown; the latest one's is", async () => {
    const run = latestOnly();
    let failOld!: (e: Error) => void;
    const old = run.run(() => new Promise<string>((_, reject) => (failOld = reject)));
    const latest = run.run(() => Promise.reject(new Error("server down")));
    failOld(new Error("old failure"));
    expect(await old).toEqual({ stale: true });
    expect(await latest).toEqual({ ok: false, error: new Error("server down") });
  });
});

describe("a 422 beside its field", () => {
  const e422 = new ApiError(422, "validation_error", "…", [
    { loc: ["body", "value"], msg: "Value error, value must be a non-negative decimal", type: "value_error" },
    { loc: ["body", "stage"], msg: "Input should be 'new' or 'won'", type: "literal_error" },
    { loc: ["body", "stage"], msg: "second complaint", type: "value_error" },
    { loc: ["body", "custom_data", "x"], msg: "Input should be a valid dictionary", type: "dict_type" },
    { loc: ["query", "page"], msg: "Input should be greater than or equal to 1", type: "greater_than_equal" },
  ]);

  test("each item goes to the field its loc names; the rest is one sentence", () => {
    const r = formErrors(e422, ["title", "value", "stage"]);
    expect(r.fields).toEqual({ value: "Value error, value must be a non-negative decimal", stage: "Input should be 'new' or 'won' second complaint" });
    expect(r.general).toBe("Input should be a valid dictionary Input should be greater than or equal to 1");
  });

  test("a 404 for a linked record shows beside its field; other failures above the buttons", () => {
    const notFound = new ApiError(404, "not_found", "Account not found.");
    expect(formErrors(notFound, ["account_id"], { "Account not found.": "account_id" })).toEqual({ fields: { account_id: "Account not found." }, general: null });
    expect(formErrors(notFound, ["account_id"])).toEqual({ fields: {}, general: "Account not found." });
    expect(formErrors(new TypeError("Failed to fetch"), ["title"]).general).toMatch(/could not be reached/);
  });

  test("the form sends blanks as null and numbers as typed, so the server names what is wrong", () => {
    const base = { title: "T", account: { id: "a1", label: "A" }, contact: null, value: "", currency: "EUR", stage: "new", probability: "", closeDate: "", assignee: "", notes: "  " };
    expect(dealBody(base)).toEqual({
      title: "T",
      account_id: "a1",
      contact_id: null,
      value: "0",
      currency: "EUR",
      stage: "new",
      probability: null,
      close_date: null,
      assigned_to: null,
      notes: null,
    });
    expect(dealBody({ ...base, probability: "40", value: " 12.5 " })).toMatchObject({ probability: 40, value: "12.5" });
    expect(dealBody({ ...base, probability: "forty" }).probability as unknown).toBe("forty");
    expect(dealBody({ ...base, account: null }).account_id).toBe("");
  });
});
