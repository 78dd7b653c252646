import { TypeCompiler } from "@sinclair/typebox/compiler";
import { timeOrderedId } from "../../kernel/ids";
import { toValidationItems } from "../../kernel/validation";
import { MAX_CUSTOM_DATA_BYTES } from "../model";
import { centsOf } from "../money";
import type { AccountRow, ContactRow, PipelineStageRow } from "../repo";
import { clean } from "../service";
import { unguard } from "../../kernel/csv";
import {
  AccountRowSchema,
  ContactRowSchema,
  DealRowSchema,
  IGNORED_COLUMNS,
  IMPORT_COLUMNS,
  MAX_IMPORT_ROWS,
  MAX_REPORTED_ERRORS,
  type Kind,
  type RowError,
} from "./model";
import type { ImportDeal } from "./repo";

// Compiled once: a 100,000-row import checks each row in microseconds.
const dealCheck = TypeCompiler.Compile(DealRowSchema);
const accountCheck = TypeCompiler.Compile(AccountRowSchema);
const contactCheck = TypeCompiler.Compile(ContactRowSchema);

const REQUIRED: Record<Kind, string[]> = { deals: ["title", "account_name"], accounts: ["name"], contacts: ["first_name"] };
const INTEGER = /^\s*[+-]?\d+\s*$/;
/** An external id: one line of at most 200 characters. */
const MAX_EXTERNAL_ID = 200;
const ONE_LINE = /^[^\r\n]*$/;

/** How a name is matched: trimmed, lower-cased. */
export const nameKey = (s: string): string => s.trim().toLowerCase();

/** What the rows' names are matched against; the maps are keyed by nameKey, the first of a name kept, and grow with the file's new records. */
export interface Known {
  accountByName: Map<string, { id: string; name: string }>;
  contactByName: Map<string, { id: string; name: string }>;
  users: Array<{ id: string; email: string; full_name: string | null }>;
  stages: PipelineStageRow[];
  contactName: (first: string, last: string | null) => string;
}

export interface ImportPlan {
  rows: number;
  validRows: number;
  errorCount: number;
  errors: RowError[];
  /** What the file writes (or, in a dry run, would write). */
  created: { accounts: number; contacts: number; deals: number };
}

/**
 * A record the import writes: a row of the file (`line`), or an account or contact a row named
 * that the organization lacked (create_missing; line of the row naming it, fromFile false).
 * `matchId` and `externalId` say which record a file row updates, if one exists when it is written.
 */
export type ImportItem = { line: number; fromFile: boolean; matchId: string | null; externalId: string | null } & (
  | { entity: "account"; row: AccountRow }
  | { entity: "contact"; row: ContactRow }
  | { entity: "deal"; row: ImportDeal }
);

/** Where accepted rows go as they are read (null: a dry run, counted only). Rows are handed over only while no row has failed. */
export type ImportSink = ((item: ImportItem) => void) | null;

/**
 * Checks an import file's records one at a time, as the JSON create endpoints would (same
 * schemas), naming accounts, contacts, members and stages as the tenant has them
 * (case-insensitive). Each accepted row goes to `sink` as it is read; the plan counts them.
 * The same checker reads the file when it is uploaded (sink null) and again when the job writes it.
 */
export function createRowChecker(kind: Kind, known: Known, createMissing: boolean, mapping: readonly string[] | null = null) {
  const plan: ImportPlan = { rows: 0, validRows: 0, errorCount: 0, errors: [], created: { accounts: 0, contacts: 0, deals: 0 } };
  let sink: ImportSink = null;
  /** The row being read: its line, and which record it names (id, external_id cells). */
  let current = { line: 0, matchId: null as string | null, externalId: null as string | null };
  const out = (entity: "account" | "contact" | "deal", row: AccountRow | ContactRow | ImportDeal, fromFile: boolean) => {
    if (sink && plan.errorCount === 0) {
      sink({ entity, row, fromFile, line: current.line, matchId: fromFile ? current.matchId : null, externalId: fromFile ? current.externalId : null } as ImportItem);
    }
  };
  const emit = {
    account(a: AccountRow, fromFile = false) {
      plan.created.accounts++;
      out("account", a, fromFile);
    },
    contact(c: ContactRow, fromFile = false) {
      plan.created.contacts++;
      out("contact", c, fromFile);
    },
    deal(d: ImportDeal) {
      plan.created.deals++;
      out("deal", d, true);
    },
  };
  /** Lines of the ids and external ids seen so far: a record is named by one row at most. */
  const seenKeys = new Map<string, number>();
  const fail = (line: number, column: string | null, message: string) => {
    plan.errorCount++;
    if (plan.errors.length < MAX_REPORTED_ERRORS) plan.errors.push({ line, column, message });
  };
  // The header: names in any case; an unknown one is an error (a typo would silently drop data).
  let header: string[] | null = null;
  const readable = new Set(IMPORT_COLUMNS[kind]);
  const skipped = new Set(IGNORED_COLUMNS[kind]);
  const readHeader = (names: string[]) => {
    if (mapping) {
      // The caller named each column's field by position ("" ignores it): the file's own names do not matter.
      if (mapping.length !== names.length) fail(1, null, `The column mapping names ${mapping.length} columns, but the file has ${names.length}.`);
      header = names.map((_, j) => mapping[j] ?? "");
      for (const r of REQUIRED[kind]) if (!header.includes(r)) fail(1, r, `No column is mapped to ${r}, which is required.`);
      return;
    }
    header = names.map((h) => h.trim().toLowerCase());
    // A set, not indexOf per column: a header of many columns costs its length, not its square.
    const seen = new Set<string>();
    header.forEach((h) => {
      const twice = seen.has(h);
      seen.add(h);
      if (twice) fail(1, h, "This column appears twice.");
      else if (!readable.has(h) && !skipped.has(h)) fail(1, h || null, `Unknown column; the columns are ${IMPORT_COLUMNS[kind].join(", ")}.`);
    });
    for (const r of REQUIRED[kind]) if (!header.includes(r)) fail(1, r, "This column is required.");
  };

  const lower = nameKey;
  const { accountByName, contactByName } = known;
  const userByEmail = new Map(known.users.map((u) => [lower(u.email), u]));
  const stageByName = new Map<string, string>();
  for (const s of known.stages) stageByName.set(lower(s.name), s.key);
  for (const s of known.stages) stageByName.set(s.key, s.key);
  const stageList = known.stages.map((s) => s.key).join(", ");

  const stub = { tenant_id: "", created_at: 0, updated_at: 0 };
  /** An account named in a row: the tenant's, one this file creates, or (allowed) a new one. */
  const account = (line: number, column: string, raw: string): { id: string; name: string } | null => {
    const found = accountByName.get(lower(raw));
    if (found) return found;
    if (!createMissing) return fail(line, column, `No account is named "${raw.trim()}". Check the name, or import with missing accounts and contacts created.`), null;
    const body = { name: raw };
    if (!accountCheck.Check(body)) return schemaErrors(line, [...accountCheck.Errors(body)], { name: column }), null;
    const a: AccountRow = { id: timeOrderedId(), name: raw.trim(), domain: null, industry: null, ...stub };
    emit.account(a);
    accountByName.set(lower(raw), a);
    return a;
  };
  const schemaErrors = (line: number, list: Parameters<typeof toValidationItems>[1], rename: Record<string, string> = {}) => {
    for (const item of toValidationItems("body", list)) {
      const field = String(item.loc[1] ?? "");
      fail(line, rename[field] ?? (field || null), item.msg);
    }
  };

  /** One data row, checked and added to the plan (or its errors). */
  function readRow(rec: string[], line: number, header: string[]): void {
    if (rec.length !== header.length) {
      fail(line, null, `Expected ${header.length} cells, found ${rec.length}.`);
      return;
    }
    const cell: Record<string, string | undefined> = {};
    header.forEach((h, j) => {
      const v = unguard(rec[j]!);
      if (readable.has(h) && v.trim() !== "") cell[h] = v;
    });
    const before = plan.errorCount;
    current = { line, matchId: null, externalId: null };
    for (const column of ["id", "external_id"] as const) {
      const v = cell[column]?.trim();
      if (v === undefined) continue;
      if (v.length > MAX_EXTERNAL_ID || !ONE_LINE.test(v)) fail(line, column, `An ${column} is one line of at most ${MAX_EXTERNAL_ID} characters.`);
      const at = seenKeys.get(`${column}:${v}`);
      if (at !== undefined) fail(line, column, `Line ${at} names the same record; a file names each record once.`);
      else seenKeys.set(`${column}:${v}`, line);
      if (column === "id") current.matchId = v;
      else current.externalId = v;
    }
    if (kind === "accounts") {
      const body = { name: cell.name ?? "", domain: cell.domain, industry: cell.industry };
      if (!accountCheck.Check(body)) schemaErrors(line, [...accountCheck.Errors(body)]);
      else if (plan.errorCount === before) emit.account({ id: timeOrderedId(), name: body.name.trim(), domain: clean(body.domain), industry: clean(body.industry), ...stub }, true);
    } else if (kind === "contacts") {
      const body = { first_name: cell.first_name ?? "", last_name: cell.last_name, email: cell.email, phone: cell.phone };
      if (!contactCheck.Check(body)) schemaErrors(line, [...contactCheck.Errors(body)]);
      const acc = cell.account_name === undefined ? null : account(line, "account_name", cell.account_name);
      if (plan.errorCount === before) {
        emit.contact({
          id: timeOrderedId(),
          first_name: body.first_name.trim(),
          last_name: clean(body.last_name),
          email: clean(body.email)?.toLowerCase() ?? null,
          phone: clean(body.phone),
          account_id: acc?.id ?? null,
          ...stub,
        }, true);
      }
    } else {
      const prob = cell.probability;
      const body: Record<string, unknown> = {
        title: cell.title ?? "",
        value: cell.value?.trim(),
        currency: cell.currency?.trim(),
        stage: cell.stage?.trim(),
        close_date: cell.close_date?.trim(),
        probability: prob !== undefined && INTEGER.test(prob) ? Number(prob) : prob,
        notes: cell.notes,
      };
      for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
      if (!dealCheck.Check(body)) schemaErrors(line, [...dealCheck.Errors(body)]);
      let customData: string | null = null;
      if (cell.custom_data !== undefined) {
        let v: unknown;
        try {
          v = JSON.parse(cell.custom_data);
        } catch {
          v = undefined;
        }
        if (!v || typeof v !== "object" || Array.isArray(v)) fail(line, "custom_data", "Input should be a JSON object");
        else if (Buffer.byteLength((customData = JSON.stringify(v)), "utf8") > MAX_CUSTOM_DATA_BYTES) {
          fail(line, "custom_data", `custom_data can be at most ${MAX_CUSTOM_DATA_BYTES} bytes of JSON.`);
        }
      }
      const stage = stageByName.get(lower((body.stage as string | undefined) ?? "new"));
      if (stage === undefined) fail(line, "stage", `Unknown stage; this organization's stages are ${stageList}.`);
      let assignee: { id: string; email: string; full_name: string | null } | null = null;
      if (cell.assignee_email !== undefined) {
        assignee = userByEmail.get(lower(cell.assignee_email)) ?? null;
        if (!assignee) fail(line, "assignee_email", "No member of this organization has this address.");
      }
      if (plan.errorCount !== before) return; // references are created only for rows that are otherwise valid
      const acc = cell.account_name === undefined ? (fail(line, "account_name", "Field required"), null) : account(line, "account_name", cell.account_name);
      let contact: { id: string; name: string } | null = null;
      if (acc && cell.contact_name !== undefined) {
        contact = contactByName.get(lower(cell.contact_name)) ?? null;
        if (!contact && !createMissing) fail(line, "contact_name", `No contact is named "${cell.contact_name.trim()}". Check the name, or import with missing accounts and contacts created.`);
        else if (!contact) {
          const [first, ...rest] = cell.contact_name.trim().split(/\s+/);
          const c: ContactRow = { id: timeOrderedId(), first_name: first!, last_name: rest.join(" ") || null, email: null, phone: null, account_id: acc.id, ...stub };
          const check = { first_name: c.first_name, last_name: c.last_name };
          if (!contactCheck.Check(check)) schemaErrors(line, [...contactCheck.Errors(check)], { first_name: "contact_name", last_name: "contact_name" });
          else {
            emit.contact(c);
            contact = { id: c.id, name: known.contactName(c.first_name, c.last_name) };
            contactByName.set(lower(contact.name), contact);
          }
        }
      }
      if (!acc || plan.errorCount !== before) return;
      emit.deal({
        id: timeOrderedId(),
        title: (body.title as string).trim(),
        account_id: acc.id,
        account_name: acc.name,
        contact_id: contact?.id ?? null,
        contact_name: contact?.name ?? null,
        assigned_to: assignee?.id ?? null,
        assignee_name: assignee?.full_name ?? null,
        assignee_email: assignee?.email ?? null,
        stage: stage!,
        value_cents: body.value === undefined ? 0 : centsOf(body.value as string)!,
        currency: (body.currency as string | undefined) ?? "USD",
        close_date: (body.close_date as string | undefined) ?? null,
        probability: (body.probability as number | undefined) ?? null,
        notes: clean(body.notes as string | undefined),
        custom_data: customData,
      });
    }
    if (plan.errorCount === before) plan.validRows++;
  }

  /** One record of the file: the header first, then rows (those past the limit only counted). */
  function record(rec: string[]): void {
    if (header === null) {
      readHeader(rec);
      headerOk = plan.errorCount === 0;
    } else if (++rows <= MAX_IMPORT_ROWS && headerOk) readRow(rec, rows + 1, header);
  }
  let rows = 0;
  let headerOk = false;
  return {
    plan,
    record,
    /** Where accepted rows go from now on. */
    setSink(s: ImportSink) {
      sink = s;
    },
    /** The header's columns (lower case), once read. */
    columns: (): ReadonlySet<string> => new Set((header ?? []).filter((h) => h !== "")),
    headerRead: () => header !== null,
    /** A syntax error ends the file. */
    syntaxError(line: number, message: string) {
      fail(line, null, `The file is not valid CSV: ${message}`);
    },
    /** The end of the file: the row count, and the file-wide errors. */
    finish(): ImportPlan {
      if (header === null) {
        if (plan.errorCount === 0) fail(1, null, "The file is empty: the first row must name the columns.");
        return plan;
      }
      plan.rows = rows;
      if (rows > MAX_IMPORT_ROWS) {
        Object.assign(plan, { validRows: 0, errorCount: 0, errors: [], created: { accounts: 0, contacts: 0, deals: 0 } });
        fail(MAX_IMPORT_ROWS + 2, null, `An import has at most ${MAX_IMPORT_ROWS} rows; split the file.`);
      }
      return plan;
    },
  };
}

export type RowChecker = ReturnType<typeof createRowChecker>;
