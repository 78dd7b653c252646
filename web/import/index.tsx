/**
 * Import (admins): choose a CSV file and what it holds, match its columns to fields (./mapping.tsx;
 * prefilled by name, comma, semicolon or tab separated), check it (a dry run that lists every row
 * error by line and column), then import it: all rows or none. The file goes up as the request
 * body itself (text/csv) and becomes a job written in the background: a progress bar follows it
 * (JobProgress), then says what its rows did. ?kind= preselects deals, accounts or contacts.
 */
import "../deals/crm.css";
import "./import.css";
import { useState } from "preact/hooks";
import { api, ApiError, type ImportJob, type ImportReport, type ImportRowError, type TransferKind } from "../api/client";
import { plainMessage } from "../api/messages";
import { JobProgress } from "./job-progress";
import { ColumnMapping, guessField, mappingProblem, readHeader } from "./mapping";
import { Link, useLocation } from "../shared/router";
import { useSession } from "../shared/session";
import { errorMessage } from "../shared/states";

const KINDS: Array<{ value: TransferKind; label: string; columns: string }> = [
  { value: "deals", label: "Deals", columns: "title, account_name, value, currency, stage, probability, close_date, contact_name, assignee_email, notes, custom_data, id, external_id" },
  { value: "accounts", label: "Accounts", columns: "name, domain, industry, id, external_id" },
  { value: "contacts", label: "Contacts", columns: "first_name, last_name, email, phone, account_name, id, external_id" },
];
const MAX_BYTES = 50 * 1024 * 1024;

/** A refused import (422) lists its row errors as items with loc ["body", line, column]. */
const rowErrorsOf = (e: unknown): ImportRowError[] | null =>
  e instanceof ApiError && e.status === 422 && e.items.length > 0 && typeof e.items[0]!.loc[1] === "number"
    ? e.items.map((i) => ({ line: i.loc[1] as number, column: i.loc[2] === "row" ? null : String(i.loc[2]), message: i.msg }))
    : null;

export default function ImportScreen() {
  const { query } = useLocation();
  const given = query.get("kind");
  const [kind, setKind] = useState<TransferKind>(KINDS.some((k) => k.value === given) ? (given as TransferKind) : "deals");
  const [file, setFile] = useState<File | null>(null);
  const [headers, setHeaders] = useState<string[] | null>(null);
  const [mapping, setMapping] = useState<string[]>([]);
  const [createMissing, setCreateMissing] = useState(false);
  const [busy, setBusy] = useState<"check" | "import" | null>(null);
  const [report, setReport] = useState<ImportReport | null>(null);
  const [job, setJob] = useState<ImportJob | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const admin = useSession().me?.user.role === "admin";
  const info = KINDS.find((k) => k.value === kind)!;

  const reset = () => (setReport(null), setFailure(null), setJob(null));
  const chooseFile = async (f: File | null, k = kind) => {
    setFile(f);
    reset();
    const h = f ? await readHeader(f).catch(() => null) : null;
    setHeaders(h && h.length ? h : null);
    setMapping(h ? h.map((name) => guessField(name, k)) : []);
    if (f && !h?.length) setFailure("The file's first row should name its columns; this one is empty.");
  };
  const problem = headers ? mappingProblem(mapping, kind) : null;
  const run = async (dryRun: boolean) => {
    if (!file) return setFailure("Choose a CSV file first.");
    if (file.size > MAX_BYTES) return setFailure("This file is larger than 50 MB: split it.");
    setBusy(dryRun ? "check" : "import");
    setFailure(null);
    try {
      // The mapping as the server reads it: one field per column, by position, empty to ignore.
      const query = { create_missing: createMissing ? ("true" as const) : undefined, columns: headers ? mapping.join(",") : undefined };
      // A dry run answers the report (200); an import, its job (202).
      if (dryRun) setReport((await api.post(`/api/v1/crm/${kind}/import`, { query: { ...query, dry_run: "true" }, csv: file })) as ImportReport);
      else {
        setJob((await api.post(`/api/v1/crm/${kind}/import`, { query, csv: file })) as ImportJob);
        setReport(null);
      }
    } catch (e) {
      const rows = rowErrorsOf(e);
      if (rows) setReport({ kind, dry_run: true, rows: 0, valid_rows: 0, error_count: rows.length, errors: rows, created: { deals: 0, accounts: 0, contacts: 0 } });
      else setFailure(errorMessage(e));
    } finally {
      setBusy(null);
    }
  };

  if (!admin) {
    return (
      <section class="crm import-screen" aria-labelledby="import-title">
        <h1 id="import-title">Import</h1>
        <p>Only admins can import. You can export any list with its “Export CSV” button.</p>
      </section>
    );
  }
  const checkedClean = report !== null && report.dry_run && report.error_count === 0 && job === null;
  return (
    <section class="crm import-screen" aria-labelledby="import-title">
      <div class="screen-head">
        <h1 id="import-title">Import from CSV</h1>
        <Link class="button" href={`/${kind}`}>
          Back to {info.label.toLowerCase()}
        </Link>
      </div>
      <form onSubmit={(e) => (e.preventDefault(), void run(true))}>
        <div class="choices">
          <div class="field">
            <label for="import-kind">What the file holds</label>
            <select
              id="import-kind"
              value={kind}
              onChange={(e) => {
                const k = (e.target as HTMLSelectElement).value as TransferKind;
                setKind(k);
                reset();
                setMapping(headers ? headers.map((name) => guessField(name, k)) : []);
              }}
            >
              {KINDS.map((k) => (
                <option key={k.value} value={k.value}>
                  {k.label}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="import-file">CSV file (UTF-8, up to 50 MB)</label>
            <input id="import-file" type="file" accept=".csv,.tsv,.txt,text/csv,text/tab-separated-values" onChange={(e) => void chooseFile((e.target as HTMLInputElement).files?.[0] ?? null)} />
          </div>
        </div>
        <p class="hint">
          The first row names the columns, in any order, separated by commas, semicolons or tabs; after choosing the file you match each column to a field
          ({info.columns}). An exported file can be imported as it is: a row whose id or external_id names a record updates it, other rows are added, and importing
          the same file again changes nothing.
        </p>
        {headers ? (
          <ColumnMapping
            kind={kind}
            headers={headers}
            mapping={mapping}
            onChange={(m) => {
              setMapping(m);
              reset();
            }}
          />
        ) : null}
        {kind !== "accounts" ? (
          <label class="check">
            <input type="checkbox" checked={createMissing} onChange={(e) => (setCreateMissing((e.target as HTMLInputElement).checked), reset())} /> Create
            accounts{kind === "deals" ? " and contacts" : ""} that do not exist yet (otherwise a row naming one is an error)
          </label>
        ) : null}
        <div class="actions">
          <button type="submit" disabled={busy !== null || !file || problem !== null || job?.status === "running"}>
            {busy === "check" ? "Checking…" : "Check file"}
          </button>
          <button type="button" class="primary" disabled={busy !== null || !checkedClean} onClick={() => void run(false)}>
            {busy === "import" ? "Importing…" : "Import"}
          </button>
        </div>
        {failure ? (
          <p class="error" role="alert">
            {failure}
          </p>
        ) : null}
      </form>
      {report ? <Report report={report} /> : null}
      {job ? <JobProgress job={job} onChange={setJob} /> : null}
    </section>
  );
}

function Report({ report }: { report: ImportReport }) {
  const c = report.created;
  const made = [c.deals && `${c.deals} deals`, c.accounts && `${c.accounts} accounts`, c.contacts && `${c.contacts} contacts`].filter(Boolean).join(", ");
  if (report.error_count === 0) {
    return (
      <div class="report" role="status">
        <p class="ok">
          The file is ready: {report.rows} rows, no errors. Importing writes {made || "nothing"}; a row whose id or external_id names an existing record
          updates it.
        </p>
      </div>
    );
  }
  return (
    <div class="report">
      <p role="alert">
        {report.error_count} {report.error_count === 1 ? "error" : "errors"}
        {report.rows ? ` in ${report.rows - report.valid_rows} of ${report.rows} rows` : ""}: nothing was imported. Fix the file and check it again.
        {report.errors.length < report.error_count ? ` The first ${report.errors.length} are listed.` : ""}
      </p>
      <div class="table-wrap">
        <table class="import-errors">
          <caption class="visually-hidden">Errors by line</caption>
          <thead>
            <tr>
              <th scope="col">Line</th>
              <th scope="col">Column</th>
              <th scope="col">Problem</th>
            </tr>
          </thead>
          <tbody>
            {report.errors.map((e, i) => (
              <tr key={i}>
                <td class="line">{e.line}</td>
                <td>{e.column ?? "—"}</td>
                <td>{plainMessage({ loc: ["body", e.line, e.column ?? "row"], msg: e.message, type: "" })}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
