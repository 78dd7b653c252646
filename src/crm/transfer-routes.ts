import { Elysia } from "elysia";
import type { Context } from "../context";
import { authGuard } from "../http/auth-guard";
import { requestInfo } from "../http/client";
import { MAX_IMPORT_BYTES, importTooLarge } from "../http/body";
import { AppError, RequestValidationError } from "../http/errors";
import { assertDiskRoom } from "../db/disk-room";
import { QueryReader, rawQuery } from "../http/paging";
import { readDealQuery, readListQuery } from "./routes";
import { TRANSFER_DOCS as D } from "./transfer-docs";
import type { Kind } from "./transfer-model";

const CSV_TYPE = /^text\/csv\s*(;|$)/i;

/** The CSV body of an import: text/csv, UTF-8, at most 50 MB, counted while it streams. */
async function readCsvBody(request: Request): Promise<string> {
  if (!CSV_TYPE.test(request.headers.get("content-type") ?? "")) {
    throw new AppError(415, "unsupported_media_type", "An import's body is the CSV file itself (Content-Type: text/csv).");
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > MAX_IMPORT_BYTES) throw importTooLarge();
      chunks.push(chunk);
    }
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new RequestValidationError([{ loc: ["body"], msg: "The file is not UTF-8 text: save it as CSV UTF-8", type: "unicode_error" }]);
  }
}

function readImportQuery(url: string) {
  const q = new QueryReader(rawQuery(url));
  const dryRun = q.bool("dry_run");
  const createMissing = q.bool("create_missing");
  q.done();
  return { dryRun, createMissing };
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
 * /import. Mounted after crmRoutes with the same guard and module check. Exports are for every
 * member (they can read every row in the lists anyway); imports are for admins.
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
    .post("/deals/import", async ({ auth, request, server }) => importOf(ctx, auth, "deals", request, server), D.importDeals)
    .post("/accounts/import", async ({ auth, request, server }) => importOf(ctx, auth, "accounts", request, server), D.importAccounts)
    .post("/contacts/import", async ({ auth, request, server }) => importOf(ctx, auth, "contacts", request, server), D.importContacts);

async function importOf(ctx: Context, auth: Parameters<Context["transfer"]["importCsv"]>[0], kind: Kind, request: Request, server: Parameters<typeof requestInfo>[1]) {
  const opts = readImportQuery(request.url);
  // Admins only, before the body is read: a member learns 403 without uploading 50 MB.
  if (auth.role !== "admin") throw new AppError(403, "forbidden", "Only admins can import.");
  assertDiskRoom("import");
  const text = await readCsvBody(request);
  return ctx.transfer.importCsv(auth, kind, text, opts, requestInfo(request, server, ctx.config.trustProxy));
}
