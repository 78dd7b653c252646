import { Elysia, t } from "elysia";
import type { Context } from "../../context";
import { authGuard } from "../../http/auth-guard";
import { requestInfo } from "../../http/client";
import { MAX_IMPORT_BYTES, importTooLarge } from "../../http/body";
import { AppError } from "../../kernel/errors";
import { assertDiskRoom } from "../../db/disk-room";
import { QueryReader, rawQuery } from "../../kernel/paging";
import { readDealQuery, readListQuery } from "../routes";
import { TRANSFER_DOCS as D } from "./docs";
import { IMPORT_COLUMNS, type Kind, MAX_HEADER_COLUMNS } from "./model";

const CSV_TYPE = /^text\/csv\s*(;|$)/i;

/** An import's body is the CSV file itself; checked before a byte of it is read. */
function requireCsv(request: Request): void {
  if (!CSV_TYPE.test(request.headers.get("content-type") ?? "")) {
    throw new AppError(415, "unsupported_media_type", "An import's body is the CSV file itself (Content-Type: text/csv).");
  }
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > MAX_IMPORT_BYTES) throw importTooLarge();
}

function readImportQuery(url: string, kind: Kind) {
  const q = new QueryReader(rawQuery(url));
  const dryRun = q.bool("dry_run");
  const createMissing = q.bool("create_missing");
  const mapping = readMapping(q, kind);
  q.done();
  return { dryRun, createMissing, mapping };
}

/**
 * `columns`: the field each column of the file is read as, by position, comma-separated; an
 * empty entry ignores its column ("title,,value"). Absent: the header row names the fields.
 */
function readMapping(q: QueryReader, kind: Kind): string[] | null {
  const text = q.value("columns");
  if (text === undefined) return null;
  if (text.length > 2000) return q.items.push({ loc: ["query", "columns"], msg: "String should have at most 2000 characters", type: "string_too_long", ctx: { max_length: 2000 } }), null;
  const fields = text.split(",").map((f) => f.trim().toLowerCase());
  const allowed = new Set(IMPORT_COLUMNS[kind]);
  const seen = new Set<string>();
  const refuse = (msg: string) => q.items.push({ loc: ["query", "columns"], msg, type: "value_error", input: text });
  if (fields.length > MAX_HEADER_COLUMNS) refuse(`Value error, a mapping names at most ${MAX_HEADER_COLUMNS} columns`);
  for (const f of fields) {
    if (f === "") continue;
    if (!allowed.has(f)) return refuse(`Value error, "${f.slice(0, 50)}" is not a field of an import of ${kind}; the fields are ${IMPORT_COLUMNS[kind].join(", ")}`), null;
    if (seen.has(f)) return refuse(`Value error, two columns are mapped to ${f}; map each field once`), null;
    seen.add(f);
  }
  return fields;
}

/** A download: the stream as the body, named by what it holds and the day it was taken. */
const csvFile = (kind: Kind, stream: ReadableStream<Uint8Array>, now: number) =>
  new Response(stream, {
    headers: {
      "content-type": "text/csv; charset=utf-8",
      "content-disposition": `attachment; filename="${kind}-${new Date(now).toISOString().slice(0, 10)}.csv"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });

/**
 * CSV export and import of the CRM (issue 16): /api/v1/crm/{deals,accounts,contacts}/export and
 * /import, and the import jobs (issue 27): /api/v1/crm/jobs. Mounted after crmRoutes with the
 * same guard and module check. Exports and jobs are for every member (they can read every row in
 * the lists anyway); imports are for admins.
 */
export const transferRoutes = (ctx: Context) =>
  new Elysia({ name: "crm-transfer-routes", prefix: "/api/v1/crm", seed: ctx.id })
    .use(authGuard(ctx))
    .derive({ as: "local" }, async ({ auth }) => {
      await ctx.tenants.requireModule(auth.tenantId, "crm");
      return {};
    })
    .get("/deals/export", async ({ auth, request }) => csvFile("deals", await ctx.transfer.exportDeals(auth, readDealQuery(request.url)), ctx.now()), D.exportDeals)
    .get("/accounts/export", async ({ auth, request }) => csvFile("accounts", await ctx.transfer.exportAccounts(auth, readListQuery(request.url)), ctx.now()), D.exportAccounts)
    .get("/contacts/export", async ({ auth, request }) => csvFile("contacts", await ctx.transfer.exportContacts(auth, readListQuery(request.url)), ctx.now()), D.exportContacts)
    .post("/deals/import", async ({ auth, request, server, set }) => importOf(ctx, auth, "deals", request, server, set), D.importDeals)
    .post("/accounts/import", async ({ auth, request, server, set }) => importOf(ctx, auth, "accounts", request, server, set), D.importAccounts)
    .post("/contacts/import", async ({ auth, request, server, set }) => importOf(ctx, auth, "contacts", request, server, set), D.importContacts)
    .get("/jobs", ({ auth, request }) => ctx.jobs.list(auth, readPageQuery(request.url)), D.listJobs)
    .get("/jobs/:id", ({ auth, params }) => ctx.jobs.get(auth, params.id), { params: t.Object({ id: t.String() }), ...D.getJob });

function readPageQuery(url: string) {
  const q = new QueryReader(rawQuery(url));
  const paging = q.paging();
  q.done();
  return paging;
}

async function importOf(
  ctx: Context,
  auth: Parameters<Context["jobs"]["upload"]>[0],
  kind: Kind,
  request: Request,
  server: Parameters<typeof requestInfo>[1],
  set: { status?: number | string },
) {
  const opts = readImportQuery(request.url, kind);
  // Admins only, before the body is read: a member learns 403 without uploading 50 MB.
  if (auth.role !== "admin") throw new AppError(403, "forbidden", "Only admins can import.");
  // Below the disk reserve an import is refused (507) before its upload is read.
  assertDiskRoom("import");
  requireCsv(request);
  const answer = await ctx.jobs.upload(auth, kind, request.body, opts, requestInfo(request, server, ctx.config.trustProxy));
  // A dry run's report at once; a real import is a job, written after this answer.
  if (!opts.dryRun) set.status = 202;
  return answer;
}
