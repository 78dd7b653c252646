/**
 * The column-mapping step of an import: the chosen file's header columns, each with the field it
 * is read as (or "Ignore this column"), prefilled by name. The server gets the choice as the
 * import's `columns` parameter (one field per column, by position; empty ignores it), so a file
 * whose header says "Company" or "Betrag" imports without being edited first.
 */
import type { TransferKind } from "../api/client";

/** Fields each kind reads, in the order the select lists them (the server's import columns). */
export const IMPORT_FIELDS: Record<TransferKind, string[]> = {
  deals: ["title", "account_name", "value", "currency", "stage", "probability", "close_date", "contact_name", "assignee_email", "notes", "custom_data", "id", "external_id"],
  accounts: ["name", "domain", "industry", "id", "external_id"],
  contacts: ["first_name", "last_name", "email", "phone", "account_name", "id", "external_id"],
};
export const REQUIRED_FIELDS: Record<TransferKind, string[]> = { deals: ["title", "account_name"], accounts: ["name"], contacts: ["first_name"] };

const FIELD_LABELS: Record<string, string> = {
  title: "Title",
  account_name: "Account (by name)",
  value: "Value",
  currency: "Currency",
  stage: "Stage",
  probability: "Probability",
  close_date: "Close date",
  contact_name: "Contact (by name)",
  assignee_email: "Assignee (by email)",
  notes: "Notes",
  custom_data: "Custom data (JSON)",
  id: "Id (updates that record)",
  external_id: "External id",
  name: "Name",
  domain: "Domain",
  industry: "Industry",
  first_name: "First name",
  last_name: "Last name",
  email: "Email",
  phone: "Phone",
};
export const fieldLabel = (f: string) => FIELD_LABELS[f] ?? f;

/** Other names a spreadsheet gives a field (lower case, words joined by "_"). */
const SYNONYMS: Record<TransferKind, Record<string, string>> = {
  deals: { deal: "title", deal_name: "title", name: "title", account: "account_name", company: "account_name", organization: "account_name", amount: "value", price: "value", contact: "contact_name", owner: "assignee_email", assignee: "assignee_email", close: "close_date", expected_close: "close_date", note: "notes" },
  accounts: { account: "name", account_name: "name", company: "name", website: "domain" },
  contacts: { first: "first_name", firstname: "first_name", given_name: "first_name", last: "last_name", lastname: "last_name", surname: "last_name", e_mail: "email", account: "account_name", company: "account_name", telephone: "phone", mobile: "phone" },
};

/** A header name → the field it most likely is, or "" (ignore). */
export function guessField(header: string, kind: TransferKind): string {
  const key = header.trim().toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_|_$/g, "");
  if (IMPORT_FIELDS[kind].includes(key)) return key;
  return SYNONYMS[kind][key] ?? "";
}

/** The separator of the header line, as the server reads it: the most frequent of , ; tab outside quotes (a tie: comma). */
export function delimiterOf(line: string): string {
  const n: Record<string, number> = { ",": 0, ";": 0, "\t": 0 };
  let quoted = false;
  for (const c of line) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && c in n) n[c]!++;
  }
  return n[";"]! > n[","]! && n[";"]! >= n["\t"]! ? ";" : n["\t"]! > n[","]! && n["\t"]! > n[";"]! ? "\t" : ",";
}

/** The cells of a file's first record (quotes as in CSV; a byte order mark skipped). */
export function headerCells(text: string): string[] {
  const s = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let end = 0;
  for (let quoted = false; end < s.length; end++) {
    const c = s[end];
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === "\n" || c === "\r")) break;
  }
  const line = s.slice(0, end);
  const sep = delimiterOf(line);
  const cells: string[] = [];
  let cell = "";
  for (let i = 0, quoted = false; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === sep) (cells.push(cell), (cell = ""));
    else cell += c;
  }
  cells.push(cell);
  return cells.length === 1 && cells[0] === "" ? [] : cells;
}

/** The header of a chosen file: its first 64 KB is enough (the server allows 16 KB of header). */
export async function readHeader(file: Blob): Promise<string[]> {
  return headerCells(await file.slice(0, 65_536).text());
}

/** What is wrong with a mapping, as a sentence, or null. */
export function mappingProblem(mapping: string[], kind: TransferKind): string | null {
  const used = mapping.filter(Boolean);
  const twice = used.find((f, i) => used.indexOf(f) !== i);
  if (twice) return `Two columns are read as ${fieldLabel(twice)}: choose it for one column only.`;
  const missing = REQUIRED_FIELDS[kind].filter((f) => !used.includes(f));
  if (missing.length) return `Choose a column for ${missing.map(fieldLabel).join(" and ")}: every row needs it.`;
  return null;
}

export function ColumnMapping(props: { kind: TransferKind; headers: string[]; mapping: string[]; onChange: (m: string[]) => void }) {
  const { kind, headers, mapping, onChange } = props;
  const problem = mappingProblem(mapping, kind);
  return (
    <fieldset class="mapping">
      <legend>Match the file's columns</legend>
      <p class="hint">Each column of the file is read as the field chosen beside it. Columns set to “Ignore this column” are not imported.</p>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Column in the file</th>
              <th scope="col">Read as</th>
            </tr>
          </thead>
          <tbody>
            {headers.map((h, i) => (
              <tr key={i}>
                <th scope="row">
                  <label for={`map-${i}`}>{h.trim() || `Column ${i + 1} (no name)`}</label>
                </th>
                <td>
                  <select id={`map-${i}`} value={mapping[i] ?? ""} onChange={(e) => onChange(mapping.map((m, j) => (j === i ? (e.target as HTMLSelectElement).value : m)))}>
                    <option value="">Ignore this column</option>
                    {IMPORT_FIELDS[kind].map((f) => (
                      <option key={f} value={f}>
                        {fieldLabel(f)}
                      </option>
                    ))}
                  </select>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {problem && (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
    </fieldset>
  );
}
