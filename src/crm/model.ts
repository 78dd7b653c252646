import { t, type Static } from "elysia";
import { documentedAs } from "../http/openapi";
import { pageSchema } from "../http/page-schema";
import { MULTILINE_PATTERN, NAME_PATTERN, SINGLE_LINE_PATTERN, registerFormat } from "../kernel/validation";
import { MAX_MONEY, MONEY_PATTERN } from "./money";
import "./currencies";

/** The pipeline every new organization starts with (docs/interface.md#crm-records). */
export const DEFAULT_STAGES = [
  { key: "new", name: "New", color: "#64748b", probability: 10, is_won: 0, is_lost: 0 },
  { key: "qualified", name: "Qualified", color: "#3b82f6", probability: 25, is_won: 0, is_lost: 0 },
  { key: "proposal", name: "Proposal", color: "#8b5cf6", probability: 50, is_won: 0, is_lost: 0 },
  { key: "negotiation", name: "Negotiation", color: "#f59e0b", probability: 75, is_won: 0, is_lost: 0 },
  { key: "won", name: "Won", color: "#22c55e", probability: 100, is_won: 1, is_lost: 0 },
  { key: "lost", name: "Lost", color: "#ef4444", probability: 0, is_won: 0, is_lost: 1 },
] as const;

/** custom_data: a JSON object of at most 16 KiB, as UTF-8 JSON text. */
export const MAX_CUSTOM_DATA_BYTES = 16 * 1024;

const isCalendarDate = (v: string): boolean => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === v;
};
registerFormat("calendar_date", isCalendarDate, "Input should be a valid date in the format YYYY-MM-DD");

// Names and short fields are one line without control characters (they reach mails and lists);
// notes are multi-line by nature and keep tabs and line breaks.
const Text = (max: number) => t.String({ minLength: 1, maxLength: max, pattern: NAME_PATTERN });
const OptionalText = (max: number) => t.Optional(t.Nullable(t.String({ maxLength: max, pattern: SINGLE_LINE_PATTERN })));
const Notes = t.Optional(t.Nullable(t.String({ maxLength: 10_000, pattern: MULTILINE_PATTERN })));
const Ref = t.String({ minLength: 1, maxLength: 64 });

// ---- pipeline stages ----

export const StageCreate = t.Object({
  key: t.String({ minLength: 1, maxLength: 50, pattern: "^[a-z0-9]+(?:[-_][a-z0-9]+)*$" }),
  name: Text(100),
  color: t.Optional(t.String({ pattern: "^#[0-9a-fA-F]{6}$" })),
  position: t.Optional(t.Integer({ minimum: 0, maximum: 10_000 })),
  probability: t.Optional(t.Integer({ minimum: 0, maximum: 100 })),
  is_won: t.Optional(t.Boolean()),
  is_lost: t.Optional(t.Boolean()),
});
export type StageCreate = Static<typeof StageCreate>;

/** The key is what deals hold, so it never changes; everything a person sees does. */
export const StagePatch = t.Object({
  name: t.Optional(Text(100)),
  color: t.Optional(t.String({ pattern: "^#[0-9a-fA-F]{6}$" })),
  probability: t.Optional(t.Integer({ minimum: 0, maximum: 100 })),
  is_won: t.Optional(t.Boolean()),
  is_lost: t.Optional(t.Boolean()),
});
export type StagePatch = Static<typeof StagePatch>;

/** Every stage id of the organization, once each, in the new order. */
export const StageReorder = t.Object({ ids: t.Array(Ref, { minItems: 1, maxItems: 1000 }) });
export type StageReorder = Static<typeof StageReorder>;

// ---- accounts ----

export const AccountCreate = t.Object({
  name: Text(200),
  domain: OptionalText(253),
  industry: OptionalText(100),
});
export type AccountCreate = Static<typeof AccountCreate>;

export const AccountPatch = t.Object({
  name: t.Optional(Text(200)),
  domain: OptionalText(253),
  industry: OptionalText(100),
});
export type AccountPatch = Static<typeof AccountPatch>;

// ---- contacts ----

export const ContactCreate = t.Object({
  first_name: Text(100),
  last_name: OptionalText(100),
  email: OptionalText(254),
  phone: OptionalText(50),
  account_id: t.Optional(t.Nullable(Ref)),
});
export type ContactCreate = Static<typeof ContactCreate>;

export const ContactPatch = t.Object({
  first_name: t.Optional(Text(100)),
  last_name: OptionalText(100),
  email: OptionalText(254),
  phone: OptionalText(50),
  account_id: t.Optional(t.Nullable(Ref)),
});
export type ContactPatch = Static<typeof ContactPatch>;

// ---- deals ----

/**
 * value arrives as "1234.5" or 1234.5; the route's transform turns a number into its text first,
 * so the validator sees text. The API description shows both forms (`documentedAs`).
 */
const Money = t.String({
  format: "money",
  maxLength: 40,
  ...documentedAs({
    title: "DealValue",
    description: 'An exact amount, at most 13 digits before the point and 2 after: decimal text ("1234.5") or a JSON number (1234.5). Answered as text with two places ("1234.50").',
    oneOf: [
      { type: "string", maxLength: 40, pattern: MONEY_PATTERN, examples: ["1234.5"] },
      { type: "number", minimum: 0, maximum: MAX_MONEY, examples: [1234.5] },
    ],
  }),
});
/** An ISO 4217 code (currencies.ts): three upper-case letters that name a currency. */
const Currency = t.String({ pattern: "^[A-Z]{3}$", format: "currency", description: "An ISO 4217 currency code, e.g. USD" });
const CloseDate = t.Nullable(t.String({ format: "calendar_date" }));
/** Omitted on create: the stage's probability (a new deal starts where its stage says); null: none. */
const Probability = t.Nullable(t.Integer({ minimum: 0, maximum: 100, description: "Percent; omitted on create: the stage's probability" }));
// Checked by the service (deals-service.ts): Elysia would coerce a list or a string into an object.
const CustomData = t.Any();
const Stage = t.String({ minLength: 1, maxLength: 50, pattern: SINGLE_LINE_PATTERN });

export const DealCreate = t.Object({
  title: Text(200),
  account_id: Ref,
  value: t.Optional(Money),
  currency: t.Optional(Currency),
  stage: t.Optional(Stage),
  close_date: t.Optional(CloseDate),
  probability: t.Optional(Probability),
  assigned_to: t.Optional(t.Nullable(Ref)),
  notes: Notes,
  custom_data: t.Optional(CustomData),
  contact_id: t.Optional(t.Nullable(Ref)),
});
export type DealCreate = Static<typeof DealCreate>;

/** Any writable field; absent ones stay as they are. */
export const DealPatch = t.Partial(DealCreate);
export type DealPatch = Static<typeof DealPatch>;

/** The deal list's sortable fields (docs/interface.md#the-deal-list). */
export const SORT_FIELDS = [
  "title",
  "value",
  "stage",
  "probability",
  "close_date",
  "created_at",
  "updated_at",
  "account_name",
  "contact_name",
  "assignee_name",
] as const;
export type SortField = (typeof SORT_FIELDS)[number];
export const SORT_DIRS = ["asc", "desc"] as const;
export type SortDir = (typeof SORT_DIRS)[number];

/** What the deal board's summary groups by. */
export const SUMMARY_GROUPS = ["stage", "assigned_to"] as const;
export type SummaryGroup = (typeof SUMMARY_GROUPS)[number];

export interface DealListQuery {
  page: number;
  size: number;
  search: string | null;
  stages: string[] | null;
  /** A user id; "" for unassigned; null for anyone. */
  assignee: string | null;
  sortBy: SortField;
  sortDir: SortDir;
  /** Only the deals of this account, of this contact (an account's and a contact's pages); absent or null: any. */
  account?: string | null;
  contact?: string | null;
}

// ---- what the API answers ----
// Each answer's one declaration: the routes name it in the API description (docs.ts), the
// services return its Static type, and the tests check every answer against the description.

const Time = t.String({ format: "date-time" });
const Maybe = <T extends Parameters<typeof t.Nullable>[0]>(s: T) => t.Optional(t.Nullable(s));

export const StageRead = t.Object({
  id: t.String(),
  tenant_id: t.String(),
  key: t.String(),
  name: t.String(),
  color: t.String(),
  position: t.Integer(),
  probability: t.Integer(),
  is_won: t.Boolean(),
  is_lost: t.Boolean(),
  created_at: Time,
}, { title: "StageRead" });
export type StageRead = Static<typeof StageRead>;
export const StageList = t.Array(StageRead);
export type StageList = Static<typeof StageList>;

export const AccountRead = t.Object({
  id: t.String(),
  tenant_id: t.String(),
  name: t.String(),
  domain: t.Nullable(t.String()),
  industry: t.Nullable(t.String()),
  created_at: Time,
  updated_at: Time,
}, { title: "AccountRead" });
export type AccountRead = Static<typeof AccountRead>;
export const AccountPage = pageSchema(AccountRead);
export type AccountPage = Static<typeof AccountPage>;

export const ContactRead = t.Object({
  id: t.String(),
  tenant_id: t.String(),
  first_name: t.String(),
  last_name: t.Nullable(t.String()),
  name: t.String(),
  email: t.Nullable(t.String()),
  phone: t.Nullable(t.String()),
  account_id: t.Nullable(t.String()),
  created_at: Time,
  updated_at: Time,
}, { title: "ContactRead" });
export type ContactRead = Static<typeof ContactRead>;
export const ContactPage = pageSchema(ContactRead);
export type ContactPage = Static<typeof ContactPage>;

/** A deal as answered. Which fields are optional or nullable, and their defaults, is the published contract of a deal. */
export const DealRead = t.Object({
  title: t.String(),
  account_id: t.String(),
  id: t.String(),
  tenant_id: t.String(),
  created_at: Time,
  updated_at: Time,
  // An addition to the fixed shape: optional, so a client of the earlier service reads a Deal as before.
  stage_changed_at: t.Optional(t.String({ format: "date-time", description: "When the deal entered its current stage (always sent)" })),
  // The default: what a deal created without the field holds.
  value: t.Optional(t.String({ description: 'Exact decimal text with two places, "1234.50"', default: "0.00" })),
  currency: t.Optional(t.String({ description: "Three upper-case letters", default: "USD" })),
  stage: t.Optional(t.String({ description: "One of the organization's pipeline stage keys", default: "new" })),
  close_date: Maybe(t.String({ format: "date" })),
  probability: Maybe(t.Integer({ minimum: 0, maximum: 100 })),
  assigned_to: Maybe(t.String()),
  notes: Maybe(t.String()),
  custom_data: Maybe(t.Record(t.String(), t.Any())),
  contact_id: Maybe(t.String()),
  pipeline_stage_id: Maybe(t.String()),
  pipeline_stage_name: Maybe(t.String()),
  pipeline_stage_color: Maybe(t.String()),
  is_won: t.Optional(t.Boolean({ default: false })),
  is_lost: t.Optional(t.Boolean({ default: false })),
  account_name: Maybe(t.String()),
  contact_name: Maybe(t.String()),
  assignee_name: Maybe(t.String()),
  assignee_email: Maybe(t.String()),
}, { title: "DealRead" });
/**
 * The server always sends every field (the schema keeps the contract's optional ones optional,
 * for clients): a deal built without one is a compile error.
 */
export type DealRead = Required<Static<typeof DealRead>>;
export const DealPage = pageSchema(DealRead);
export type DealPage = Static<typeof DealPage>;

const CurrencySum = t.Object({
  currency: t.String({ description: "Three upper-case letters" }),
  sum: t.String({ description: 'The exact sum of the deals\' values in this currency, decimal text with two places ("1234.50")' }),
}, { title: "DealCurrencySum" });

/** One column of the board: a stage (in pipeline order) or an assignee (null key: nobody). */
export const DealSummaryGroup = t.Object({
  key: t.Nullable(t.String({ description: "The stage key, or the assignee's user id; null for the deals nobody is assigned to" })),
  label: t.String({ description: "The stage's name, or the assignee's name (else address); \"Unassigned\" for nobody" }),
  count: t.Integer({ minimum: 0 }),
  values: t.Array(CurrencySum, { description: "One sum per currency its deals hold, by currency code; empty when it has no deals" }),
}, { title: "DealSummaryGroup" });
export type DealSummaryGroup = Static<typeof DealSummaryGroup>;

/** The deal board's counts and sums: the deal list's filters and search, grouped. */
export const DealSummary = t.Object({
  groups: t.Array(DealSummaryGroup),
  total: t.Integer({ minimum: 0, description: "Deals within the filters and search, all groups together" }),
}, { title: "DealSummary" });
export type DealSummary = Static<typeof DealSummary>;

/** A contact's display name: "first last", or the first name alone. */
export const contactName = (first: string, last: string | null): string => (last?.trim() ? `${first} ${last}` : first);

/** Sort keys and search text are lower-cased the same way everywhere (JS, Unicode-aware). */
export const sortKey = (s: string): string => s.toLowerCase();
/**
 * What the deal search reads (deals.search_text): the title, notes field, account and contact,
 * then the deal's notes' text (noteTextOf) when it has notes. A deal without notes has the text it
 * had before notes were searched, so no stored text changed with it (an import of the same file
 * still finds every row unchanged).
 */
export const searchTextOf = (title: string, notes: string | null, account: string, contact: string | null, noteText: string): string =>
  [title, notes ?? "", account, contact ?? "", ...(noteText === "" ? [] : [noteText])].join("\n").toLowerCase();

export { MAX_NOTE_TEXT, noteTextOf } from "../db/deal-note-text";

// ---- a deal's timeline and notes ----

/** A note: plain text (line breaks kept, no control characters), at most 10,000 characters. */
export const MAX_NOTE = 10_000;
export const NoteWrite = t.Object({ body: t.String({ minLength: 1, maxLength: MAX_NOTE, pattern: MULTILINE_PATTERN }) });
export type NoteWrite = Static<typeof NoteWrite>;

/** Who did it: the member's id and name (their address when they have no name; "A former member" once removed). */
export const ActorRead = t.Object({ id: t.String(), name: t.String() }, { title: "ActorRead" });
export type ActorRead = Static<typeof ActorRead>;

export const NoteRead = t.Object({
  id: t.String(),
  deal_id: t.String(),
  body: t.String(),
  author: ActorRead,
  created_at: Time,
  updated_at: Time,
}, { title: "NoteRead" });
export type NoteRead = Static<typeof NoteRead>;

export const ACTIVITY_TYPES = ["created", "updated", "stage_changed", "note", "imported", "restored"] as const;
/**
 * One entry of a deal's timeline. `data` by type: created {title, stage, value, currency};
 * updated {changes: [{field, before, after, before_id?, after_id?}]}; stage_changed {from, to}
 * (stage keys); note {note: NoteRead}; imported {job_id, action: "added" | "updated", changes?, from?, to?};
 * restored {job_id, undo_of}: brought back by undoing a bulk delete. Entries of a bulk change carry its job_id (and undo_of when it undid one).
 */
export const ActivityRead = t.Object({
  id: t.String(),
  type: t.Union(ACTIVITY_TYPES.map((k) => t.Literal(k))),
  created_at: Time,
  actor: t.Nullable(ActorRead),
  data: t.Record(t.String(), t.Any()),
}, { title: "DealActivityRead" });
export type ActivityRead = Static<typeof ActivityRead>;
export const ActivityPage = pageSchema(ActivityRead);
export type ActivityPage = Static<typeof ActivityPage>;

// ---- an account's and a contact's timeline ----

export const RECORD_ACTIVITY_TYPES = ["created", "updated", "imported"] as const;
/**
 * One entry of an account's or a contact's timeline, in a deal's entry shape. `data` by type:
 * created {the record's fields as shown: name, domain, industry; or first_name, last_name, email,
 * phone, account, account_id}; updated {changes: [{field, before, after, before_id?, after_id?}]}
 * (a contact's account by name, with the ids beside); imported {job_id, action: "added" |
 * "updated", changes?} (a contact's account by its ids only).
 */
export const RecordActivityRead = t.Object({
  id: t.String(),
  type: t.Union(RECORD_ACTIVITY_TYPES.map((k) => t.Literal(k))),
  created_at: Time,
  actor: t.Nullable(ActorRead),
  data: t.Record(t.String(), t.Any()),
}, { title: "RecordActivityRead" });
export type RecordActivityRead = Static<typeof RecordActivityRead>;
export const RecordActivityPage = pageSchema(RecordActivityRead);
export type RecordActivityPage = Static<typeof RecordActivityPage>;
