import { Elysia } from "elysia";
import type { Context } from "../context";
import { authGuard } from "../http/auth-guard";
import { requireAdmin } from "../kernel/principal";
import { wantsCsv } from "../kernel/csv";
import { doc } from "../http/openapi";
import { QueryReader, rawQuery } from "../kernel/paging";
import { listParameters } from "../http/page-schema";
import { AuditLogPage } from "./model";
import type { AuditFilter } from "./repo";

// ISO 8601 date-times: a date, optionally a time (seconds and fractions optional) and an offset.
// Without an offset the time is UTC. A date alone is its midnight.
const ISO_DATETIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** Milliseconds since the epoch, or null when the text is not a real ISO 8601 date-time. */
export function parseIsoDateTime(text: string): number | null {
  const m = ISO_DATETIME.exec(text.trim());
  if (!m) return null;
  const [y, mo, d, h = "0", mi = "0", s = "0", frac = "", zone = "Z"] = m.slice(1).map((v) => v ?? undefined) as string[];
  const nums = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  const utc = Date.UTC(nums[0], nums[1] - 1, nums[2], nums[3], nums[4], nums[5], Number(frac.padEnd(3, "0").slice(0, 3)));
  const back = new Date(utc);
  // Feb 30 or 25:00 would roll over into another date: not a date-time.
  if (back.getUTCDate() !== nums[2] || back.getUTCMonth() !== nums[1] - 1 || nums[3] > 23 || nums[4] > 59 || nums[5] > 59) return null;
  let offset = 0;
  if (zone.toUpperCase() !== "Z") {
    const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
    if (Number(z[2]) > 23 || Number(z[3]) > 59) return null;
    offset = (z[1] === "-" ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3])) * 60_000;
  }
  const ms = utc - offset;
  return Number.isFinite(ms) && y !== "0000" ? ms : null;
}

/** The audit log's query: paging, filters, and whether a CSV is asked for. Every failing parameter gets its own 422 item. */
function readAuditQuery(url: string) {
  const raw = rawQuery(url);
  const q = new QueryReader(raw);
  const paging = q.paging();
  const userId = q.value("user_id") || null;
  const actions = q.all("action");
  const time = (name: "since" | "until"): number | null => {
    const text = q.value(name);
    if (text === undefined || text === "") return null;
    const ms = parseIsoDateTime(text);
    if (ms === null) q.items.push({ loc: ["query", name], msg: "Input should be a valid datetime (ISO 8601, e.g. 2026-01-31T09:00:00Z)", type: "datetime_parsing", input: text });
    return ms;
  };
  const since = time("since");
  const until = time("until");
  if (since !== null && until !== null && since > until) {
    q.items.push({ loc: ["query", "until"], msg: "Value error, until is before since", type: "value_error", input: q.value("until") });
  }
  const format = q.literal("format", ["json", "csv"] as const);
  q.done();
  const filter: AuditFilter = { userId, actions: actions.length > 0 ? actions : null, since: since ?? 0, until: until ?? Number.MAX_SAFE_INTEGER };
  return { paging, filter, format };
}

const PARAMETERS = listParameters([
  { name: "user_id", description: "Rows of this user", schema: { type: "string" } },
  { name: "action", description: "Repeatable: rows with any of these actions", schema: { type: "array", items: { type: "string" } } },
  { name: "since", description: "Rows at or after this ISO 8601 date-time (UTC when it has no offset)", schema: { type: "string", format: "date-time" } },
  { name: "until", description: "Rows at or before this ISO 8601 date-time; not before since", schema: { type: "string", format: "date-time" } },
  { name: "format", description: "csv: the same as `Accept: text/csv`, for a plain download link", schema: { type: "string", enum: ["json", "csv"] } },
]);

const listDoc = doc({
  summary: "The organization's audit log, newest first (admins); as CSV with Accept: text/csv",
  description:
    "A page of audit rows. With `Accept: text/csv` (or `format=csv`) every matching row, newest first, streams as a CSV download " +
    "(page and size are ignored); cells starting with = + - @ get a leading apostrophe so spreadsheets do not run them.",
  tags: ["audit"],
  auth: true,
  ok: { 200: ["AuditLogPage", AuditLogPage] },
  parameters: PARAMETERS,
});
// The same 200 also comes as CSV.
const ok200 = (listDoc.detail.responses as Record<string, { content: Record<string, unknown> }>)["200"]!;
ok200.content["text/csv"] = { schema: { type: "string" } };

/** /api/v1/audit-log: who did what, when and from where, for the organization's admins. */
export const auditRoutes = (ctx: Context) =>
  new Elysia({ name: "audit-routes", prefix: "/api/v1/audit-log", seed: ctx.id })
    .use(authGuard(ctx))
    .get(
      "",
      ({ auth, request }) => {
        // A member learns 403 whatever the query.
        requireAdmin(auth);
        const q = readAuditQuery(request.url);
        if (wantsCsv(request, q.format ?? undefined) && q.format !== "json") return ctx.auditLog.csv(auth, q.filter);
        return ctx.auditLog.page(auth, q.filter, q.paging);
      },
      listDoc,
    );
