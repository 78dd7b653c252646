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
  /** The p99 the issue asks for: 2 ms without a search, 25 ms with one, 100 ms for one- and two-letter terms. */
  targetMs: number;
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
  /** Terms as a person types them: the most frequent trigrams of titles and account names, and their 1- and 2-letter prefixes. */
  typed: { one: string[]; two: string[]; three: string[] };
}

/** The most frequent letter pairs or trigrams inside the words of `texts`, most frequent first. */
export function frequentGrams(texts: string[], n: number, count: number): string[] {
  const seen = new Map<string, number>();
  for (const text of texts)
    for (const word of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
      const c = [...word];
      for (let i = 0; i + n <= c.length; i++) {
        const g = c.slice(i, i + n).join("");
        seen.set(g, (seen.get(g) ?? 0) + 1);
      }
    }
  return [...seen.entries()].sort((a, b) => b[1] - a[1]).slice(0, count).map(([g]) => g);
}

export const SORT_FIELDS = ["title", "value", "stage", "probability", "close_date", "created_at", "updated_at", "account_name", "contact_name", "assignee_name"];

interface Filter {
  search?: string;
  stages?: string[];
  /** A user id, or "" for unassigned. */
  assignee?: string;
}

/** The truth: the deal list's search (docs/interface.md#the-deal-list) over the four fields, by joins and lower(), no FTS, no counters. */
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
  type Variant = { params: Record<string, string | number | string[] | undefined>; filter: Filter; token?: string };
  const shape = (name: string, search: boolean, variants: Variant[], checks = 2, targetMs = search ? 25 : 2): Shape => ({
    name,
    search,
    targetMs,
    requests: variants.map((v) => ({ path: path(v.params), token: v.token ?? x.adminToken })),
    checks: variants.slice(0, checks).map((v) => ({ path: path(v.params), token: v.token ?? x.adminToken, ...truth(x.tenantId, v.filter) })),
  });
  const range = (n: number, from = 1) => Array.from({ length: n }, (_, i) => from + i);
  const pairs = x.stages.flatMap((a, i) => x.stages.slice(i + 1).map((b) => [a, b]));

  const shapes: Shape[] = [
    // Signed-in members (issue 15's throughput figure), each on the first ten pages.
    shape("default list", false, range(10).map((page) => ({ params: page === 1 ? {} : { page }, filter: {}, token: x.members[page % x.members.length]?.token })), 1),
    shape("page 500", false, range(41, 480).map((page) => ({ params: { page }, filter: {} })), 1),
    shape("one stage", false, x.stages.flatMap((s) => range(5).map((page) => ({ params: { stage: s, page }, filter: { stages: [s] } }))), 3),
    shape("two stages", false, pairs.map((p) => ({ params: { stage: p }, filter: { stages: p } })), 3),
    shape("mine", false, x.members.map((m) => ({ params: { mine: "true" }, filter: { assignee: m.id }, token: m.token })), 3),
    shape("unassigned", false, range(10).map((page) => ({ params: { unassigned: "true", page }, filter: { assignee: "" } })), 1),
    shape("assigned_to", false, x.userIds.map((u) => ({ params: { assigned_to: u }, filter: { assignee: u } })), 3),
    // One assignee's deals share one sort key: their range of the assignee index is sought, not walked to.
    shape("unassigned by assignee", false, range(10).map((page) => ({ params: { unassigned: "true", sort_by: "assignee_name", sort_dir: page % 2 ? "asc" : "desc", page }, filter: { assignee: "" } })), 1),
    shape("mine by assignee", false, x.members.map((m, k) => ({ params: { mine: "true", sort_by: "assignee_name", sort_dir: k % 2 ? "asc" : "desc" }, filter: { assignee: m.id }, token: m.token })), 3),
  ];
  for (const field of SORT_FIELDS) {
    for (const dir of ["asc", "desc"]) {
      shapes.push(shape(`sort ${field} ${dir}`, false, range(10).map((page) => ({ params: { sort_by: field, sort_dir: dir, page }, filter: {} })), 1));
    }
  }
  shapes.push(shape("search rare term", true, x.rareWords.map((w) => ({ params: { search: w }, filter: { search: w } })), 3));
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
  // Terms as typed: each prefix alone, then with what a user has already chosen (stages, an
  // assignee filter, a sort). `k` rotates through every combination across the variants.
  const { one, two, three } = x.typed;
  const member = (k: number) => x.members[k % x.members.length]!;
  const assigneeOf = (k: number): { params: Record<string, string>; filter: Filter; token?: string } => {
    switch (k % 4) {
      case 0:
        return { params: {}, filter: {} };
      case 1:
        return { params: { mine: "true" }, filter: { assignee: member(k).id }, token: member(k).token };
      case 2:
        return { params: { unassigned: "true" }, filter: { assignee: "" } };
      default:
        return { params: { assigned_to: x.userIds[k % x.userIds.length]! }, filter: { assignee: x.userIds[k % x.userIds.length]! } };
    }
  };
  const stagesOf = (k: number): string[] | undefined => (k % 3 === 0 ? undefined : k % 3 === 1 ? [x.stages[k % x.stages.length]!] : pairs[k % pairs.length]);
  const combos = (terms: string[], n: number): Variant[] =>
    range(n, 0).map((k) => {
      const search = terms[k % terms.length]!;
      const a = assigneeOf(Math.floor(k / terms.length));
      const stages = stagesOf(k + Math.floor(k / 4));
      const sort = SORT_FIELDS[(k * 7) % SORT_FIELDS.length]!;
      return {
        params: { search, stage: stages, sort_by: sort, sort_dir: k % 2 ? "asc" : "desc", ...a.params },
        filter: { search, stages, assignee: a.filter.assignee },
        token: a.token,
      };
    });
  const plain = (terms: string[]): Variant[] => terms.map((w) => ({ params: { search: w }, filter: { search: w } }));
  shapes.push(shape("typed 1 letter", true, plain(one), 2, 100));
  shapes.push(shape("typed 1 letter + filters + sort", true, combos(one, 80), 3, 100));
  shapes.push(shape("typed 2 letters", true, plain(two), 2, 100));
  shapes.push(shape("typed 2 letters + filters + sort", true, combos(two, 80), 3, 100));
  shapes.push(shape("typed 3 letters", true, plain(three), 2));
  shapes.push(
    shape(
      "typed 3 letters + stage + value desc",
      true,
      three.flatMap((w) => x.stages.map((stage) => ({ params: { search: w, stage, sort_by: "value", sort_dir: "desc" }, filter: { search: w, stages: [stage] } }))),
      3,
    ),
  );
  shapes.push(shape("typed 3 letters + mine", true, three.map((w, k) => ({ params: { search: w, mine: "true" }, filter: { search: w, assignee: member(k).id }, token: member(k).token })), 3));
  shapes.push(shape("typed 3 letters + unassigned", true, three.map((w) => ({ params: { search: w, unassigned: "true" }, filter: { search: w, assignee: "" } })), 2));
  shapes.push(shape("typed 3 letters + filters + sort", true, combos(three, 160), 4));
  return shapes;
}
