import { describe, expect, test } from "bun:test";
import { savedQueryOf, stateOf } from "../../../web/deals/saved-views";
import { parseView } from "../../../web/deals/view";

// A saved view ↔ the deal list's URL-held state: what is saved comes back as it was, at page 1.

describe("saved views of the deal list", () => {
  test("the state survives saving and applying, at its first page", () => {
    const v = parseView(new URLSearchParams("?view=board&search=acme&stage=won&stage=lost&mine=1&sort_by=value&sort_dir=desc&page=4&size=50"));
    const query = savedQueryOf(v);
    expect(query).toEqual({ search: "acme", stage: ["won", "lost"], mine: true, sort_by: "value", sort_dir: "desc", size: 50 });
    expect(stateOf({ kind: "board", query })).toEqual({ ...v, page: 1 });
  });

  test("defaults are left out; a view of one assignee or of the unassigned keeps it", () => {
    expect(savedQueryOf(parseView(new URLSearchParams("")))).toEqual({});
    const user = parseView(new URLSearchParams("?assigned_to=u_7"));
    expect(stateOf({ kind: "table", query: savedQueryOf(user) })).toEqual(user);
    const none = parseView(new URLSearchParams("?unassigned=true"));
    expect(savedQueryOf(none)).toEqual({ unassigned: true });
    expect(stateOf({ kind: "table", query: { unassigned: true } }).assignee).toEqual({ kind: "unassigned" });
  });
});
