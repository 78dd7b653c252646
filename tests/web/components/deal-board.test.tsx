import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { installDom, until } from "./crm-dom";

// The deals board in happy-dom with a fake server: the view switch (aria-pressed, in the URL),
// columns headed by the summary's exact counts and sums, cards read per stage with the same
// filters, and a move with the "Move to…" list: shown at once, sent as the deal's stage change,
// and put back with a sentence when the server refuses. Then the board's exact arithmetic.

const dom = installDom("http://acme.localhost/deals?view=board&search=globex");
afterAll(() => dom.restore());

const { render } = await import("preact");
const { default: DealsScreen } = await import("../../../web/deals/index");
const { SessionContext } = await import("../../../web/shared/session");
const { stagesChanged } = await import("../../../web/stages/store");
const { adjusted, centsOf, movedInSummary, textOf } = await import("../../../web/deals/board/moves");

const me = { id: "u_me", tenant_id: "t", email: "me@acme.test", full_name: "Mia Member", role: "member" as const, profile_id: null, created_at: "", email_verified: true, email_verified_at: "", email_verified_by: "mail" as const };
const session = { me: { user: me, tenant: { id: "t", name: "Acme", subdomain: "acme", modules: ["crm"], created_at: "", require_passkey_or_2fa: false, require_passkey_for_admins: false }, has_password: true, policy_setup: null }, reload: async () => null, signOut: async () => {} };
const stage = (id: string, key: string, name: string, position: number) => ({ id, tenant_id: "t", key, name, color: "#64748b", position, probability: 10, is_won: false, is_lost: false, created_at: "" });
const stages = [stage("s1", "new", "New", 0), stage("s2", "won", "Won", 1)];
const deal = (id: string, title: string, stageKey = "new") => ({
  id, tenant_id: "t", title, account_id: "a1", created_at: "", updated_at: "", value: "1234.50", currency: "EUR", stage: stageKey, close_date: null, probability: null,
  assigned_to: "u_me", notes: null, custom_data: null, contact_id: null, pipeline_stage_id: "s1", pipeline_stage_name: "New", pipeline_stage_color: "#64748b",
  is_won: false, is_lost: false, account_name: "Globex", contact_name: null, assignee_name: "Mia Member", assignee_email: "me@acme.test",
  stage_changed_at: new Date(Date.now() - 3 * 86_400_000 - 60_000).toISOString(),
});
const summary = {
  groups: [
    { key: "new", label: "New", count: 2, values: [{ currency: "EUR", sum: "2469.00" }] },
    { key: "won", label: "Won", count: 0, values: [] },
  ],
  total: 2,
};
const text = (sel: string) => [...document.querySelectorAll(sel)].map((e) => e.textContent?.trim());
const column = (key: string) => document.querySelector(`[data-stage="${key}"]`)!;
const cardTitles = (key: string) => [...column(key).querySelectorAll(".card-title")].map((e) => e.textContent);

function mount() {
  render(
    <SessionContext.Provider value={session}>
      <DealsScreen />
    </SessionContext.Provider>,
    dom.root,
  );
}
afterEach(() => {
  render(null, dom.root);
  stagesChanged();
});

describe("the board", () => {
  test("columns with exact counts, cards per stage with the table's filters, a refused move put back", async () => {
    mount();
    await until(() => dom.pending("/crm/pipeline-stages").length > 0, "the stages request");
    dom.pending("/crm/pipeline-stages")[0]!.respond(200, stages);
    const pressed = document.querySelectorAll('.view-switch button[aria-pressed="true"]');
    expect([...pressed].map((b) => b.textContent)).toEqual(["Board"]);

    await until(() => dom.pending("/crm/deals/summary").length > 0 && dom.pending("/crm/deals").length === 2, "the summary and the two columns");
    const sum = dom.pending("/crm/deals/summary")[0]!;
    expect(sum.url.searchParams.get("search")).toBe("globex");
    sum.respond(200, summary);
    for (const call of dom.pending("/crm/deals")) {
      expect(call.url.searchParams.get("search")).toBe("globex");
      const key = call.url.searchParams.getAll("stage");
      expect(key.length).toBe(1);
      call.respond(200, { items: key[0] === "new" ? [deal("d1", "Globex rollout"), deal("d2", "Globex pilot")] : [], total: key[0] === "new" ? 2 : 0, page: 1, size: 20, pages: key[0] === "new" ? 1 : 0 });
    }
    await until(() => cardTitles("new").length === 2, "the cards");
    await until(() => text(".column-count")[0] !== "Counting…", "the counts");
    expect(text(".column-head h2")).toEqual(["New", "Won"]);
    expect(text(".column-count")).toEqual(["2 deals", "0 deals"]);
    expect(text(".card-days")).toEqual(["3 days in this stage", "3 days in this stage"]);

    // Move with the list: at once on screen, then the PATCH.
    const select = column("new").querySelector<HTMLSelectElement>(".card-move")!;
    select.value = "won";
    select.dispatchEvent(new Event("change", { bubbles: true }));
    await until(() => cardTitles("won").length === 1, "the card in Won");
    expect(text(".column-count")).toEqual(["1 deal", "1 deal"]);
    expect(document.querySelector('[role="status"].visually-hidden')!.textContent).toBe("Moved “Globex rollout” from New to Won.");
    const patch = dom.pending("/crm/deals/d1")[0]!;
    expect([patch.method, patch.body]).toEqual(["PATCH", { stage: "won" }]);

    // Refused: back where it was, said in a sentence.
    patch.respond(409, { detail: "This deal was changed by someone else.", code: "conflict" });
    await until(() => cardTitles("new").length === 2, "the card back in New");
    expect(cardTitles("new")).toEqual(["Globex rollout", "Globex pilot"]);
    expect(text(".column-count")).toEqual(["2 deals", "0 deals"]);
    expect(document.querySelector('[role="status"].visually-hidden')!.textContent).toStartWith("“Globex rollout” could not be moved to Won, so it is back in New.");
  });

  test("the Table button goes back to the table, in the URL", async () => {
    mount();
    await until(() => dom.pending("/crm/pipeline-stages").length > 0, "the stages request");
    dom.pending("/crm/pipeline-stages")[0]!.respond(200, stages);
    const table = [...document.querySelectorAll<HTMLButtonElement>(".view-switch button")].find((b) => b.textContent === "Table")!;
    table.click();
    await until(() => !location.search.includes("view=board"), "the URL");
    expect(location.search).toBe("?search=globex");
    await until(() => dom.pending("/crm/deals").some((c) => c.url.searchParams.get("page") === "1" && !c.url.searchParams.has("stage")), "the table's page");
  });
});

describe("the board's arithmetic is exact", () => {
  test("decimal text to cents and back, past 2^53", () => {
    expect(centsOf("1234.50")).toBe(123450n);
    expect(textOf(centsOf("9999999999999.99") * 1000n)).toBe("9999999999999990.00");
    expect(textOf(-5n)).toBe("-0.05");
  });
  test("a move takes a deal's value from one column to the other; an emptied currency goes", () => {
    const s = movedInSummary(summary, { value: "1234.50", currency: "EUR" }, "new", "won");
    expect(s.groups).toEqual([
      { key: "new", label: "New", count: 1, values: [{ currency: "EUR", sum: "1234.50" }] },
      { key: "won", label: "Won", count: 1, values: [{ currency: "EUR", sum: "1234.50" }] },
    ]);
    expect(adjusted(s.groups[0]!, { value: "1234.50", currency: "EUR" }, -1)).toEqual({ key: "new", label: "New", count: 0, values: [] });
    expect(adjusted(s.groups[1]!, { value: "0.10", currency: "CHF" }, 1).values).toEqual([{ currency: "CHF", sum: "0.10" }, { currency: "EUR", sum: "1234.50" }]);
  });
});
