import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { installDom, typeInto, until, type FakeCall } from "./crm-dom";

// The deal screen rendered in happy-dom with a fake server whose answers the test releases one by
// one: the URL round trip (a link renders its view, a header click pushes a new one, back
// restores it), search as you type (one request per pause, the latest answer wins, the old rows
// stay dimmed meanwhile), the error state with its retry and the empty state, and the deal
// form's 422 items beside their fields.

const dom = installDom("http://acme.localhost/deals");
afterAll(() => dom.restore());

const { render } = await import("preact");
const { default: DealsScreen } = await import("../../../web/deals/index");
const { DealForm } = await import("../../../web/deals/deal-form");
const { SessionContext } = await import("../../../web/shared/session");
const { stagesChanged } = await import("../../../web/stages/store");
/** Lets Preact render what the last event changed. */
const tick = () => new Promise((r) => setTimeout(r, 10));

const me = {
  id: "u_me",
  tenant_id: "t",
  email: "me@acme.test",
  full_name: "Mia Member",
  role: "member" as const,
  profile_id: null,
  created_at: "2026-01-01T00:00:00Z",
  email_verified: true,
  email_verified_at: "2026-01-01T00:00:00Z",
  email_verified_by: "mail" as const,
};
const session = { me: { user: me, tenant: { id: "t", name: "Acme", subdomain: "acme", modules: ["crm"], created_at: "", require_passkey_or_2fa: false, require_passkey_for_admins: false }, has_password: true, policy_setup: null }, reload: async () => null, signOut: async () => {} };
const stages = [
  { id: "s1", tenant_id: "t", key: "new", name: "New", color: "#64748b", position: 0, probability: 10, is_won: false, is_lost: false, created_at: "" },
  { id: "s2", tenant_id: "t", key: "won", name: "Won", color: "#22c55e", position: 1, probability: 100, is_won: true, is_lost: false, created_at: "" },
  { id: "s3", tenant_id: "t", key: "lost", name: "Lost", color: "#ef4444", position: 2, probability: 0, is_won: false, is_lost: true, created_at: "" },
];
const deal = (id: string, title: string) => ({
  id,
  tenant_id: "t",
  title,
  account_id: "a1",
  created_at: "2026-02-01T10:00:00Z",
  updated_at: "2026-02-01T10:00:00Z",
  stage_changed_at: "2026-02-01T10:00:00Z",
  value: "1234.50",
  currency: "EUR",
  stage: "new",
  close_date: null,
  probability: null,
  assigned_to: null,
  notes: null,
  custom_data: null,
  contact_id: null,
  pipeline_stage_id: "s1",
  pipeline_stage_name: "New",
  pipeline_stage_color: "#64748b",
  is_won: false,
  is_lost: false,
  account_name: "Globex",
  contact_name: null,
  assignee_name: null,
  assignee_email: null,
});
const page = (items: ReturnType<typeof deal>[], total = items.length) => ({ items, total, page: 1, size: 20, pages: Math.ceil(total / 20) });

const $ = <T extends Element>(sel: string) => document.querySelector(sel) as T | null;
const titles = () => [...document.querySelectorAll("table tbody td.title")].map((td) => td.textContent);
const dealCalls = () => dom.pending("/crm/deals");
const answerStages = async () => {
  await until(() => dom.pending("/crm/pipeline-stages").length > 0, "the stages request");
  dom.pending("/crm/pipeline-stages")[0]!.respond(200, stages);
};
const lastDealCall = async (): Promise<FakeCall> => {
  await until(() => dealCalls().length > 0, "a deal list request");
  return dealCalls().at(-1)!;
};

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

describe("the URL holds the deal list's whole view", () => {
  beforeAll(() => history.replaceState(null, "", "/deals?search=globex&stage=won&stage=lost&mine=1&sort_by=value&sort_dir=desc&page=2&size=50"));

  test("a link renders its view and asks the server for exactly it", async () => {
    mount();
    await answerStages();
    const call = await lastDealCall();
    const q = call.url.searchParams;
    expect(q.get("search")).toBe("globex");
    expect(q.getAll("stage")).toEqual(["won", "lost"]);
    expect(q.get("mine")).toBe("true");
    expect([q.get("sort_by"), q.get("sort_dir"), q.get("page"), q.get("size")]).toEqual(["value", "desc", "2", "50"]);
    call.respond(200, { ...page([deal("d1", "Globex rollout")], 21), page: 2, size: 50 });
    await until(() => titles().length === 1, "the rows");
    expect($<HTMLInputElement>('input[type="search"]')!.value).toBe("globex");
    const checked = [...document.querySelectorAll<HTMLInputElement>(".stage-filter input")].filter((i) => i.checked).map((i) => i.parentElement!.textContent);
    expect(checked).toEqual(["Won", "Lost"]);
    expect($<HTMLSelectElement>("#deal-assignee")!.value).toBe("mine");
    const sorted = [...document.querySelectorAll("th[aria-sort]")].filter((th) => th.getAttribute("aria-sort") !== "none");
    expect(sorted.map((th) => [th.textContent?.replace(/[▲▼↕]/g, ""), th.getAttribute("aria-sort")])).toEqual([["Value", "descending"]]);
    // Members cannot list users: no request for them.
    expect(dom.calls.some((c) => c.url.pathname.startsWith("/api/v1/users"))).toBe(false);
  });

  test("a header click pushes the new order; back restores the old one and asks for it again", async () => {
    mount();
    await answerStages();
    (await lastDealCall()).respond(200, page([deal("d1", "Globex rollout")]));
    await until(() => titles().length === 1, "the rows");
    const before = history.length;
    const titleHeader = [...document.querySelectorAll("th")].find((th) => th.textContent?.startsWith("Title"))!;
    titleHeader.querySelector("button")!.click();
    await until(() => location.search.includes("sort_by=title"), "the URL to change");
    expect(history.length).toBe(before + 1);
    expect(new URLSearchParams(location.search).get("sort_dir")).toBe("asc");
    expect(new URLSearchParams(location.search).get("page")).toBeNull();
    const sortCall = await lastDealCall();
    expect(sortCall.url.searchParams.get("sort_by")).toBe("title");
    sortCall.respond(200, page([deal("d1", "Globex rollout")]));
    await until(() => titleHeader.getAttribute("aria-sort") === "ascending", "the header to say ascending");

    history.back();
    await until(() => location.search.includes("sort_by=value"), "back to the old URL");
    const backCall = await lastDealCall();
    expect(backCall.url.searchParams.get("sort_by")).toBe("value");
    expect(backCall.url.searchParams.get("page")).toBe("2");
    backCall.respond(200, page([deal("d1", "Globex rollout")]));
    await until(() => titleHeader.getAttribute("aria-sort") === "none", "the title header unsorted again");
  });
});

describe("search as you type", () => {
  test("one request per pause, the latest answer wins, the old rows stay dimmed meanwhile", async () => {
    history.replaceState(null, "", "/deals");
    mount();
    await answerStages();
    (await lastDealCall()).respond(200, page([deal("d1", "Alpha"), deal("d2", "Beta")]));
    await until(() => titles().length === 2, "the first rows");
    const entries = history.length;
    const box = $<HTMLInputElement>('input[type="search"]')!;

    // A burst of keystrokes: one request, with the last text; the history gets one entry.
    for (const t of ["g", "gl", "glo"]) typeInto(box, t);
    const first = await lastDealCall();
    expect(first.url.searchParams.get("search")).toBe("glo");
    expect(dom.calls.filter((c) => c.url.searchParams.get("search") === "g" || c.url.searchParams.get("search") === "gl")).toEqual([]);
    expect(history.length).toBe(entries + 1);
    // Still loading: the old rows stay, dimmed.
    expect(titles()).toEqual(["Alpha", "Beta"]);
    expect($("tbody")!.className).toBe("dim");

    // Typing on before the answer: the new request aborts the old one, and replaces the history entry.
    typeInto(box, "globex");
    await until(() => dealCalls().some((c) => c.url.searchParams.get("search") === "globex"), "the second request");
    expect(first.signal!.aborted).toBe(true);
    expect(history.length).toBe(entries + 1);
    expect(new URLSearchParams(location.search).get("search")).toBe("globex");
    const second = dealCalls().find((c) => c.url.searchParams.get("search") === "globex")!;
    second.respond(200, page([deal("d3", "Globex rollout")]));
    // The overtaken answer arrives late: ignored.
    first.respond(200, page([deal("d9", "Stale row")]));
    await until(() => titles().join() === "Globex rollout", "the latest rows");
    await new Promise((r) => setTimeout(r, 20));
    expect(titles()).toEqual(["Globex rollout"]);
    expect($("tbody")!.className).toBe("");
  });
});

describe("states", () => {
  test("a failed load says why and offers a retry; the retry shows the rows; no deals at all offers the first", async () => {
    history.replaceState(null, "", "/deals");
    mount();
    await answerStages();
    (await lastDealCall()).respond(500, { detail: "Something went wrong on our side.", code: "internal_error" });
    await until(() => $('[role="alert"]')?.textContent?.includes("Something went wrong on our side.") === true, "the error");
    const retry = [...document.querySelectorAll("button")].find((b) => b.textContent === "Try again")!;
    retry.click();
    const again = await lastDealCall();
    again.respond(200, page([], 0));
    await until(() => document.body.textContent?.includes("No deals yet.") === true, "the empty state");
    expect([...document.querySelectorAll("button")].some((b) => b.textContent === "Create your first deal")).toBe(true);
    expect($('[role="alert"]')).toBeNull();
  });
});

describe("the deal form", () => {
  test("each 422 item shows beside the field its loc names, the rest above the buttons", async () => {
    let saved = false;
    render(
      <DealForm deal={deal("d1", "Globex rollout")} stages={stages} me={me} people={null} onSaved={() => (saved = true)} onCancel={() => {}} />,
      dom.root,
    );
    const value = [...document.querySelectorAll("label")].find((l) => l.textContent === "Value")!;
    const valueInput = document.getElementById(value.getAttribute("for")!) as HTMLInputElement;
    typeInto(valueInput, "12.345");
    await tick();
    $<HTMLFormElement>("form")!.dispatchEvent(new window.Event("submit", { bubbles: true, cancelable: true }) as unknown as Event);
    await until(() => dom.pending("/crm/deals/d1").length > 0, "the PATCH");
    const call = dom.pending("/crm/deals/d1")[0]!;
    expect(call.method).toBe("PATCH");
    expect(call.body).toMatchObject({ value: "12.345", account_id: "a1", title: "Globex rollout" });
    call.respond(422, {
      detail: [
        { loc: ["body", "value"], msg: "Value error, at most 2 decimals", type: "value_error" },
        { loc: ["body", "currency"], msg: "String should match pattern '^[A-Z]{3}$'", type: "string_pattern_mismatch" },
        { loc: ["body", "custom_data"], msg: "Input should be a valid dictionary", type: "dict_type" },
      ],
    });
    await until(() => document.querySelectorAll(".field.has-error").length === 2, "two fields in error");
    const errorOf = (input: HTMLInputElement) => document.getElementById(input.getAttribute("aria-describedby")!.split(" ")[0]!)?.textContent;
    expect(valueInput.getAttribute("aria-invalid")).toBe("true");
    // Each as a sentence about its field (api/messages.ts), never the API's own wording.
    expect(errorOf(valueInput)).toBe("At most 2 decimals.");
    expect(valueInput.value).toBe("12.345");
    const currency = [...document.querySelectorAll("label")].find((l) => l.textContent === "Currency")!;
    const currencyInput = document.getElementById(currency.getAttribute("for")!) as HTMLInputElement;
    expect(errorOf(currencyInput)).toBe("Choose a currency from the list.");
    expect($('[role="alert"]')!.textContent).toBe("Check the custom data.");
    const title = [...document.querySelectorAll("label")].find((l) => l.textContent === "Title")!;
    expect(document.getElementById(title.getAttribute("for")!)!.getAttribute("aria-invalid")).toBeNull();
    expect(saved).toBe(false);
  });
});

describe("a first deal: pickers that create, probability from the stage", () => {
  // Unmounted before the DOM goes, so no effect of the form runs after it.
  afterAll(() => render(null, dom.root));
  const inputOf = (label: string) => {
    const l = [...document.querySelectorAll("label")].find((x) => x.textContent === label)!;
    return document.getElementById(l.getAttribute("for")!) as HTMLInputElement;
  };
  const submit = () => $<HTMLFormElement>("form")!.dispatchEvent(new window.Event("submit", { bubbles: true, cancelable: true }) as unknown as Event);
  const newForm = (onSaved: (d: unknown) => void = () => {}) => {
    render(null, dom.root);
    render(<DealForm deal={null} stages={stages} me={me} people={null} onSaved={onSaved} onCancel={() => {}} />, dom.root);
  };

  test("a name nothing matches is offered as Create “Globex”: picking it creates the account through the API and chooses it", async () => {
    let saved: { account_id?: string } | null = null;
    newForm((d) => (saved = d as never));
    await tick();
    typeInto(inputOf("Title"), "First deal");
    const account = inputOf("Account");
    typeInto(account, "Globex");
    await until(() => dom.pending("/crm/accounts").some((c) => c.url.searchParams.get("search") === "Globex"), "the account search");
    dom.pending("/crm/accounts").forEach((c) => c.respond(200, page([], 0)));
    await until(() => [...document.querySelectorAll('[role="option"]')].some((o) => o.textContent?.startsWith("Create “Globex”")), "the create option");
    const create = [...document.querySelectorAll<HTMLElement>('[role="option"]')].find((o) => o.textContent?.startsWith("Create “Globex”"))!;
    expect(create.getAttribute("aria-selected")).toBe("true");
    create.click();
    await until(() => dom.pending("/crm/accounts").some((c) => c.method === "POST"), "the account POST");
    const post = dom.pending("/crm/accounts").find((c) => c.method === "POST")!;
    expect(post.body).toEqual({ name: "Globex" });
    post.respond(201, { id: "a_new", tenant_id: "t", name: "Globex", domain: null, industry: null, created_at: "", updated_at: "" });
    await until(() => account.getAttribute("aria-busy") === null, "the account created");
    await tick();
    expect(account.value).toBe("Globex");
    submit();
    await until(() => dom.pending("/crm/deals").some((c) => c.method === "POST"), "the deal POST");
    const dealPost = dom.pending("/crm/deals").find((c) => c.method === "POST")!;
    expect(dealPost.body).toMatchObject({ title: "First deal", account_id: "a_new", probability: 10, currency: "USD" });
    dealPost.respond(201, { ...deal("d_new", "First deal"), account_id: "a_new" });
    await until(() => saved !== null, "saved");
    expect(saved!.account_id).toBe("a_new");
  });

  test("a typed name left unchosen is kept, and a sentence beside it says what to do; nothing is sent", async () => {
    newForm();
    await tick();
    const account = inputOf("Account");
    typeInto(account, "Initech");
    // The picker's search answers first (nothing matches), so the submit never races it.
    await until(() => dom.pending("/crm/accounts").length > 0, "the account search");
    dom.pending("/crm/accounts").forEach((c) => c.respond(200, page([], 0)));
    await tick();
    account.dispatchEvent(new window.FocusEvent("blur") as unknown as Event);
    await tick();
    const before = dom.calls.filter((c) => c.url.pathname === "/api/v1/crm/deals").length;
    submit();
    await until(() => account.getAttribute("aria-invalid") === "true", "the account in error");
    expect(account.value).toBe("Initech");
    expect(document.getElementById(account.getAttribute("aria-describedby")!.split(" ")[0]!)!.textContent).toBe(
      "“Initech” is not chosen yet: pick it from the list, or pick Create “Initech” to add it as a new account.",
    );
    expect(dom.calls.filter((c) => c.url.pathname === "/api/v1/crm/deals").length).toBe(before);
    dom.pending("/crm/accounts").forEach((c) => c.respond(200, page([], 0)));
  });

  test("probability follows the stage until the person types one; currency is a list of ISO codes", async () => {
    newForm();
    await tick();
    const probability = inputOf("Probability (%)");
    const stage = inputOf("Stage") as unknown as HTMLSelectElement;
    expect(probability.value).toBe("10");
    stage.value = "won";
    stage.dispatchEvent(new window.Event("change", { bubbles: true }) as unknown as Event);
    await until(() => probability.value === "100", "won's probability");
    typeInto(probability, "35");
    await tick();
    stage.value = "lost";
    stage.dispatchEvent(new window.Event("change", { bubbles: true }) as unknown as Event);
    await tick();
    expect(probability.value).toBe("35");
    const currency = inputOf("Currency") as unknown as HTMLSelectElement;
    expect(currency.tagName).toBe("SELECT");
    const codes = [...currency.querySelectorAll("option")].map((o) => o.value);
    expect(codes.slice(0, 3)).toEqual(["USD", "EUR", "GBP"]);
    expect(codes).toContain("XAU");
    expect(codes).not.toContain("DOL");
    expect(new Set(codes).size).toBe(codes.length);
  });
});
