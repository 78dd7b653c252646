import { doc } from "../http/openapi";
import { QUERY_BOOLEAN, SEARCH_SCHEMA } from "../kernel/paging";
import { listParameters } from "../http/page-schema";
import { ActivityPage, RecordActivityPage, NoteRead, AccountPage, AccountRead, ContactPage, ContactRead, DealPage, DealRead, DealSummary, SORT_DIRS, SORT_FIELDS, SUMMARY_GROUPS, StageList, StageRead } from "./model";

// What the CRM's routes say about themselves in the API description. The answers' schemas are
// declared once, in model.ts.

const bool = (description: string) => ({ name: "", description: `${description}; ${QUERY_BOOLEAN.description}`, schema: QUERY_BOOLEAN.schema });

/** The deal list's query parameters, with their bounds and vocabularies (docs/interface.md#the-deal-list). */
const DEAL_LIST_PARAMETERS = listParameters([
  { name: "search", description: "Part of a deal's title or notes field, of its account's or contact's name, or of its notes (the newest 20,000 characters of their text); any case", schema: SEARCH_SCHEMA },
  { name: "stage", description: "Repeatable: deals in any of these stages", schema: { type: "array", items: { type: "string" } } },
  { name: "assigned_to", description: "Deals of this user (not with unassigned or mine)", schema: { type: "string" } },
  { ...bool("Only deals without an assignee"), name: "unassigned" },
  { ...bool("Only the caller's deals"), name: "mine" },
  { name: "account_id", description: "Deals of this account (an id the organization lacks matches nothing); list only, not the summary", schema: { type: "string" } },
  { name: "contact_id", description: "Deals of this contact (an id the organization lacks matches nothing); list only, not the summary", schema: { type: "string" } },
  { name: "sort_by", description: "Default created_at (then desc); ties by id, nulls last", schema: { type: "string", enum: [...SORT_FIELDS] } },
  { name: "sort_dir", description: "asc when only sort_by is given", schema: { type: "string", enum: [...SORT_DIRS] } },
]);
/** The summary's: the list's filters and search, no paging or order, and the grouping. */
const DEAL_SUMMARY_PARAMETERS = [
  ...DEAL_LIST_PARAMETERS.filter((p) => !["page", "size", "sort_by", "sort_dir", "account_id", "contact_id"].includes(p.name)),
  { name: "group_by", in: "query", required: false, description: "stage: every pipeline stage in order, empty ones too; assigned_to: each assignee with deals, and the unassigned", schema: { type: "string", enum: [...SUMMARY_GROUPS], default: "stage" } },
];
const PAGE_PARAMETERS = listParameters([{ name: "search", description: "Part of a name (or email), any case", schema: SEARCH_SCHEMA }]);

const CONTACT_LIST_PARAMETERS = listParameters([
  { name: "search", description: "Part of a name (or email), any case", schema: SEARCH_SCHEMA },
  { name: "account_id", description: "Only this account's contacts (an id the organization lacks matches nothing)", schema: { type: "string" } },
]);

const STAGE_DELETE_PARAMETERS = [
  { name: "move_to", in: "query", required: false, description: "The key of the stage its deals move to; required when it has deals", schema: { type: "string" } },
];

type RouteDoc = Parameters<typeof doc>[0];
const crm = (summary: string, ok: RouteDoc["ok"], errors: number[] = [], parameters?: unknown[], codes?: RouteDoc["codes"], idempotent?: boolean) =>
  doc({ summary, tags: ["crm"], auth: true, ok, errors: [...errors, 403], parameters, codes, idempotent });
/** A create: takes the Idempotency-Key header. */
const create = (summary: string, ok: RouteDoc["ok"], errors: number[] = [], codes?: RouteDoc["codes"]) => crm(summary, ok, errors, undefined, codes, true);

const DEAL = ["DealRead", DealRead] as const;
const ACCOUNT = ["AccountRead", AccountRead] as const;
const CONTACT = ["ContactRead", ContactRead] as const;

/** The route descriptions, by route. */
export const CRM_DOCS = {
  listStages: crm("The organization's pipeline stages, in order", { 200: ["StageList", StageList] }),
  createStage: create("Add a pipeline stage (admins)", { 201: ["StageRead", StageRead] }, [409], { 409: ["stage_exists"] }),
  patchStage: crm("Change a stage's name, colour, probability or outcome (admins); deals show it at once", { 200: ["StageRead", StageRead] }, [404]),
  reorderStages: crm("Put the stages in a new order: every stage id once (admins)", { 200: ["StageList", StageList] }),
  deleteStage: crm("Delete a stage, moving its deals to `move_to` in the same transaction (admins)", { 204: null }, [404, 409], STAGE_DELETE_PARAMETERS, { 409: ["last_stage"] }),
  listDeals: crm("The deal list: paged, filtered, sorted and searched", { 200: ["DealPage", DealPage] }, [], DEAL_LIST_PARAMETERS),
  dealSummary: crm("The deal board's counts and exact sums per currency, by stage or assignee, within the deal list's filters and search", { 200: ["DealSummary", DealSummary] }, [], DEAL_SUMMARY_PARAMETERS),
  createDeal: create("Create a deal", { 201: DEAL }, [404]),
  getDeal: crm("One deal", { 200: DEAL }, [404]),
  patchDeal: crm("Change any writable field of a deal", { 200: DEAL }, [404]),
  deleteDeal: crm("Delete a deal", { 204: null }, [404]),
  dealActivities: crm("A deal's timeline, newest first: its creation, changes, stage changes, notes and imports", { 200: ["DealActivityPage", ActivityPage] }, [404], listParameters([])),
  createNote: create("Add a note to a deal (plain text; the deal search finds the deal by its notes' newest 20,000 characters)", { 201: ["NoteRead", NoteRead] }, [404]),
  patchNote: crm("Change a note's text (its author or an admin)", { 200: ["NoteRead", NoteRead] }, [404], undefined, { 403: ["not_note_author"] }),
  deleteNote: crm("Delete a note and its timeline entry (its author or an admin)", { 204: null }, [404], undefined, { 403: ["not_note_author"] }),
  listAccounts: crm("The organization's accounts, newest first", { 200: ["AccountPage", AccountPage] }, [], PAGE_PARAMETERS),
  createAccount: create("Create an account", { 201: ACCOUNT }),
  getAccount: crm("One account", { 200: ACCOUNT }, [404]),
  accountActivities: crm("An account's timeline, newest first: its creation and each change (before and after)", { 200: ["RecordActivityPage", RecordActivityPage] }, [404], listParameters([])),
  patchAccount: crm("Change an account; a new name shows at once in its deals", { 200: ACCOUNT }, [404]),
  deleteAccount: crm("Delete an account that has no deals", { 204: null }, [404, 409], undefined, { 409: ["account_has_deals"] }),
  listContacts: crm("The organization's contacts, newest first", { 200: ["ContactPage", ContactPage] }, [], CONTACT_LIST_PARAMETERS),
  createContact: create("Create a contact", { 201: CONTACT }, [404]),
  getContact: crm("One contact", { 200: CONTACT }, [404]),
  contactActivities: crm("A contact's timeline, newest first: its creation and each change (before and after)", { 200: ["RecordActivityPage", RecordActivityPage] }, [404], listParameters([])),
  patchContact: crm("Change a contact; a new name shows at once in its deals", { 200: CONTACT }, [404]),
  deleteContact: crm("Delete a contact; its deals keep going without one", { 204: null }, [404]),
};
