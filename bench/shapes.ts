/** The bench's query shapes: each rotates over many values, and carries a few SQL truths to check. */

export interface BenchRequest {
  path: string;
  token: string;
}

export interface TruthCheck extends BenchRequest {
  /** A direct count on the database, independent of the server's counters and search index. */
  sql: string;
  args: Array<string | number>;
}

export interface Shape {
  name: string;
  search: boolean;
  requests: BenchRequest[];
  checks: TruthCheck[];
}

export interface ShapeInputs {
  tenantId: string;
  adminToken: string;
  /** Signed-in members: user id and token. */
  members: Array<{ id: string; token: string }>;
  userIds: string[];
  stages: string[];
  rareWords: string[];
}

export const SORT_FIELDS = ["title", "value", "stage", "probability", "close_date", "created_at", "updated_at", "account_name", "contact_name", "assignee_name"];
const COMMON_TRIGRAMS = ["ion", "ent", "pro", "ser", "rat", "ice", "con", "ter", "ing", "gra", "eme", "ren", "ure", "tra", "men", "ect", "ati", "res", "ort", "pla"];

interface Filter {
  search?: string;
  stages?: string[];
  /** A user id, or "" for unassigned. */
  assignee?: string;
}

/** The truth: CONTRACT §10's search over the four fields, by joins and lower(), no FTS, no counters. */
function truth(tenantId: string, f: Filter): { sql: string; args: Array<string | number> } {
  const where = ["d.tenant_id = ?"];
  const args: Array<string | number> = [tenantId];
  if (f.stages) {
    where.push(`d.stage IN (${f.stages.map(() => "?").join(", ")})`);
    args.push(...f.stages);
  }
  if (f.assignee === "") where.push("d.assigned_to IS NULL");
  else if (f.assignee !== undefined) {
    where.push("d.assigned_to = ?");
    args.push(f.assignee);
  }
  if (f.search !== undefined) {
    const term = f.search.toLowerCase();
    where.push(`(instr(lower(d.title), ?) > 0 OR instr(lower(coalesce(d.notes, '')), ?) > 0 OR instr(lower(a.name), ?) > 0
      OR instr(lower(coalesce(c.first_name || coalesce(' ' || c.last_name, ''), '')), ?) > 0)`);
    args.push(term, term, term, term);
  }
  return {
    sql: `SELECT count(*) AS n FROM deals d JOIN accounts a ON a.id = d.account_id LEFT JOIN contacts c ON c.id = d.contact_id WHERE ${where.join(" AND ")}`,
    args,
  };
}

const qs = (p: Record<string, string | number | string[] | undefined>) =>
  Object.entries(p)
    .flatMap(([k, v]) => (v === undefined ? [] : Array.isArray(v) ? v.map((x) => `${k}=${encodeURIComponent(x)}`) : [`${k}=${encodeURIComponent(String(v))}`]))
    .join("&");

export function buildShapes(x: ShapeInputs): Shape[] {
  const path = (p: Record<string, string | number | string[] | undefined>) => `/api/v1/crm/deals${Object.keys(p).length ? `?${qs(p)}` : ""}`;
  const shape = (name: string, search: boolean, variants: Array<{ params: Record<string, string | number | string[] | undefined>; filter: Filter; token?: string }>, checks = 2): Shape => ({
    name,
    search,
    requests: variants.map((v) => ({ path: path(v.params), token: v.token ?? x.adminToken })),
    checks: variants.slice(0, checks).map((v) => ({ path: path(v.params), token: v.token ?? x.adminToken, ...truth(x.tenantId, v.filter) })),
  });
  const range = (n: number, from = 1) => Array.from({ length: n }, (_, i) => from + i);
  const pairs = x.stages.flatMap((a, i) => x.stages.slice(i + 1).map((b) => [a, b]));

  const shapes: Shape[] = [
    shape("default list", false, range(10).map((page) => ({ params: page === 1 ? {} : { page }, filter: {} })), 1),
    shape("page 500", false, range(41, 480).map((page) => ({ params: { page }, filter: {} })), 1),
    shape("one stage", false, x.stages.flatMap((s) => range(5).map((page) => ({ params: { stage: s, page }, filter: { stages: [s] } }))), 3),
    shape("two stages", false, pairs.map((p) => ({ params: { stage: p }, filter: { stages: p } })), 3),
    shape("mine", false, x.members.map((m) => ({ params: { mine: "true" }, filter: { assignee: m.id }, token: m.token })), 3),
    shape("unassigned", false, range(10).map((page) => ({ params: { unassigned: "true", page }, filter: { assignee: "" } })), 1),
    shape("assigned_to", false, x.userIds.map((u) => ({ params: { assigned_to: u }, filter: { assignee: u } })), 3),
  ];
  for (const field of SORT_FIELDS) {
    for (const dir of ["asc", "desc"]) {
      shapes.push(shape(`sort ${field} ${dir}`, false, range(10).map((page) => ({ params: { sort_by: field, sort_dir: dir, page }, filter: {} })), 1));
    }
  }
  shapes.push(shape("search rare term", true, x.rareWords.map((w) => ({ params: { search: w }, filter: { search: w } })), 3));
  shapes.push(shape("search common 3-letter term", true, COMMON_TRIGRAMS.map((w) => ({ params: { search: w }, filter: { search: w } })), 2));
  shapes.push(
    shape(
      "search + stage + sort by value",
      true,
      x.rareWords.map((w, i) => {
        const stage = x.stages[i % x.stages.length]!;
        return { params: { search: w, stage, sort_by: "value", sort_dir: "desc" }, filter: { search: w, stages: [stage] } };
      }),
      3,
    ),
  );
  return shapes;
}
