import { doc } from "../../http/openapi";
import { listParameters } from "../../http/page-schema";
import { CRM_DOCS } from "../docs";
import { EXPORT_COLUMNS, IMPORT_COLUMNS, ImportReport, type Kind, MAX_HEADER_COLUMNS, MAX_IMPORT_ROWS } from "./model";
import { JobPage, JobRead } from "./jobs-model";

const csvContent = (description: string) => ({ "text/csv": { schema: { type: "string", description } } });

const BOOL = (name: string, description: string) => ({
  name,
  in: "query",
  required: false,
  description: `${description}; true/false/1/0/yes/no/on/off, default false`,
  schema: { type: "string", enum: ["true", "false", "1", "0", "yes", "no", "on", "off"] },
});

function exportDoc(kind: Kind, parameters: unknown[]) {
  const d = doc({
    summary: `Download the ${kind} as CSV (the list's filters and order, every page)`,
    description: `Columns: ${EXPORT_COLUMNS[kind].join(", ")}. UTF-8 with a byte order mark, CRLF; a cell starting with = + - @ tab or CR starts with an apostrophe (formula guard).`,
    tags: ["crm"],
    auth: true,
    ok: { 200: null },
    errors: [403],
    parameters,
  });
  (d.detail.responses as Record<string, unknown>)[200] = { description: "The CSV file", content: csvContent(`One row per ${kind.slice(0, -1)}`) };
  return d;
}

function importDoc(kind: Kind) {
  const d = doc({
    summary: `Import ${kind} from a CSV file (admins): all rows or none, as a background job`,
    description:
      `The body is the file itself (Content-Type: text/csv, UTF-8, at most 50 MB and ${MAX_IMPORT_ROWS} rows), streamed to a temporary file ` +
      `and checked whole as it arrives. The first row names the columns (any case, any order, at most ${MAX_HEADER_COLUMNS}); cells are separated by commas, or by the semicolons or tabs the first row uses. ` +
      `dry_run=true answers 200 with the report and writes nothing; a file with any error is refused with a 422 whose items are ` +
      `loc ["body", line, column]; a valid file answers 202 with an import job (GET /api/v1/crm/jobs/{id}) whose rows are then written in ` +
      `short batches, and kept only if every batch succeeds. A row whose id (or external_id) names a record of the organization updates it ` +
      `(columns the file lacks keep their value); others add one. One import per organization at a time, a few per server ` +
      `(429 too_many_jobs, with Retry-After), and a rate limit per admin.`,
    tags: ["crm"],
    auth: true,
    ok: { 200: ["ImportReport", ImportReport], 202: ["ImportJob", JobRead] },
    errors: [403, 413, 415, 429],
    codes: { 429: ["too_many_jobs", "rate_limited"] },
    parameters: [
      BOOL("dry_run", "Check the file and answer the report without writing"),
      BOOL("create_missing", "Create accounts and contacts named in rows that the organization does not have (else such a row is an error)"),
      {
        name: "columns",
        in: "query",
        required: false,
        description:
          `The field each column of the file is read as, by position, comma-separated (one of ${IMPORT_COLUMNS[kind].join(", ")}); ` +
          `an empty entry ignores its column, e.g. "title,,value". Absent: the header row names the fields.`,
        schema: { type: "string", maxLength: 2000, examples: ["title,account_name,,value"] },
      },
    ],
  });
  (d.detail as Record<string, unknown>).requestBody = { required: true, content: csvContent(`The ${kind} as CSV, a header row first`) };
  const responses = d.detail.responses as Record<string, { description: string }>;
  responses[413] = { ...responses[413]!, description: "Body over 50 MB" };
  responses[415] = { ...responses[415]!, description: "Body is not text/csv" };
  return d;
}

const dealParameters = (CRM_DOCS.listDeals.detail.parameters ?? []) as unknown[];
const listParams = listParameters([{ name: "search", description: "Part of a name (or email), any case", schema: { type: "string", maxLength: 200 } }]);

export const TRANSFER_DOCS = {
  exportDeals: exportDoc("deals", dealParameters),
  exportAccounts: exportDoc("accounts", listParams),
  exportContacts: exportDoc("contacts", listParams),
  importDeals: importDoc("deals"),
  importAccounts: importDoc("accounts"),
  importContacts: importDoc("contacts"),
  listJobs: doc({
    summary: "The organization's import jobs, newest first",
    tags: ["crm"],
    auth: true,
    ok: { 200: ["ImportJobPage", JobPage] },
    parameters: listParameters([]),
  }),
  getJob: doc({
    summary: "One import job: its progress, and when finished what its rows did (added, updated, unchanged) or why it failed",
    tags: ["crm"],
    auth: true,
    ok: { 200: ["ImportJob", JobRead] },
    errors: [404],
  }),
};
