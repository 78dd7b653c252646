import { Elysia } from "elysia";
import type { Context } from "../context";
import { requestInfo } from "../http/client";
import { doc } from "../http/openapi";
import { listParameters } from "../http/page-schema";
import { toIso } from "../kernel/ids";
import { QueryReader, rawQuery } from "../kernel/paging";
import { pageSchema } from "../http/page-schema";
import { OPERATOR_COOKIE, OPERATOR_COOKIE_PATH, baseDomainOnly, operatorGuard } from "./guard";
import {
  BackupPath, ConsoleBackupLink, ConsoleBackupScheduleBody, ConsoleBackupStarted, ConsoleBackups,
  ConsoleAuditRow, ConsoleDeleteBody, ConsoleDeletion, ConsoleJob, ExportPath, OrganizationIdPath, ConsoleMail, ConsoleOrganization, ConsoleOrganizationStatus, ConsoleOverview, ConsoleTestMailBody, ConsoleServer, MailPath,
  OperatorBackupCodes, OperatorRevokedOthers, OperatorSessionPath, OperatorSessions,
  OperatorChallenge, OperatorDone, OperatorLoginBody, OperatorMe, OperatorReauthBody, OperatorToken, OperatorVerifyBody, OrganizationPath,
} from "./model";
import { OPERATOR_SESSION_MS, OPERATOR_STEP_UP_MS } from "./service";

const tags = ["operator"] as const;
const BASE = "Base domain only: on an organization's host (or with X-Tenant) it is 404.";
const AUTH = `Needs an operator's session: \`Authorization: Bearer <access_token>\` or the \`${OPERATOR_COOKIE}\` cookie (an organization's token or cookie is refused, 401). ${BASE}`;
const STEP_UP = "Needs the password again within 10 minutes (`POST /api/v1/operator/auth/reauthenticate`), else 403 `reauthentication_required`.";

const OrganizationsPage = pageSchema(ConsoleOrganization);
const MailPage = pageSchema(ConsoleMail);
const JobsPage = pageSchema(ConsoleJob);
const AuditPage = pageSchema(ConsoleAuditRow);

/** The export's answer is a tar file, not JSON. */
function exportDoc() {
  const d = doc({
    summary: "A deleted organization's final export, once: its deals, accounts and contacts as CSV files in one tar file",
    description:
      "The link stops working once fetched (404 `export_not_found`), and after 7 days. 409 `export_not_ready` while the deletion still runs. " +
      `Needs no step-up: the link itself is the secret, handed only to the operator who deleted. ${AUTH}`,
    tags, auth: true, ok: { 200: null }, errors: [404, 409], codes: { 409: ["export_not_ready"] },
  });
  (d.detail.responses as Record<string, unknown>)[200] = {
    description: "The tar file: `<subdomain>/<subdomain>-deals.csv`, `-accounts.csv`, `-contacts.csv`",
    content: { "application/x-tar": { schema: { type: "string", format: "binary" } } },
  };
  return d;
}

/** A backup's download is the SQLite file itself, not JSON. */
function backupDownloadDoc() {
  const d = doc({
    summary: "A backup file, once per link: the SQLite database as `suite backup` wrote it (integrity-checked, no key in it)",
    description:
      "The link comes from `POST /api/v1/operator/backups/{name}/link`, works once, for 10 minutes, for the operator it was handed to: " +
      `else 404 \`download_not_found\`. ${AUTH}`,
    tags, auth: true, ok: { 200: null }, errors: [404],
  });
  (d.detail.responses as Record<string, unknown>)[200] = {
    description: "The backup: a SQLite database file, restored with `suite restore FILE` (the key file kept apart)",
    content: { "application/vnd.sqlite3": { schema: { type: "string", format: "binary" } } },
  };
  return d;
}

/** Page and size of a list, plus what `extra` reads; every failing parameter is its own 422 item. */
function readList<T>(url: string, extra: (q: QueryReader) => T) {
  const q = new QueryReader(rawQuery(url));
  const paging = q.paging();
  const more = extra(q);
  q.done();
  return { paging, ...more };
}

/** /api/v1/operator: the server's operators' sign-in and console (src/operator). */
export const operatorRoutes = (ctx: Context) => {
  const cookieAttributes = { httpOnly: true, secure: ctx.config.cookieSecure, sameSite: "strict" as const, path: OPERATOR_COOKIE_PATH };
  return new Elysia({ name: "operator-routes", prefix: "/api/v1/operator", seed: ctx.id })
    .use(baseDomainOnly(ctx))
    .post("/auth/login", async ({ body, request, server }) => {
      const r = await ctx.operators.login(body, requestInfo(request, server, ctx.config.trustProxy));
      return { requires_2fa: true as const, temp_token: r.tempToken };
    }, {
      body: OperatorLoginBody,
      ...doc({
        summary: "Operator sign-in, first step: the password answers a temp_token for the code",
        description: `Every operator has TOTP: the answer is always the challenge. Limited and locked as the organizations' sign-in is (per IP, per account and source): 401 \`invalid_credentials\`, 429. ${BASE}`,
        tags, ok: { 200: ["OperatorChallenge", OperatorChallenge] }, errors: [401, 404, 429],
      }),
    })
    .post("/auth/2fa/verify", async ({ body, request, server, cookie }) => {
      const r = await ctx.operators.verify(body, requestInfo(request, server, ctx.config.trustProxy));
      cookie[OPERATOR_COOKIE]!.set({ value: r.token, maxAge: Math.floor(OPERATOR_SESSION_MS / 1000), ...cookieAttributes });
      return { access_token: r.token, token_type: "bearer" as const, expires_at: toIso(r.expiresAt) };
    }, {
      body: OperatorVerifyBody,
      ...doc({
        summary: "Operator sign-in, second step: the code (or a backup code) opens a session",
        description:
          `A session of 8 hours at most, ended after 30 minutes unused; its token also comes as the \`${OPERATOR_COOKIE}\` cookie (HttpOnly, SameSite=Strict, ` +
          `Path=${OPERATOR_COOKIE_PATH}, this host only). A wrong code keeps the temp_token: 5 tries a minute, each counted toward the sign-in lock. ` +
          `401 \`invalid_2fa_code\`, 401 \`invalid_token\` (an unknown, spent or expired temp_token), 429. ${BASE}`,
        tags, ok: { 200: ["OperatorToken", OperatorToken] }, errors: [401, 404, 429],
      }),
    })
    .use(operatorGuard(ctx))
    .get("/auth/me", async ({ operator }) => ({
      email: operator.email,
      session_expires_at: toIso(operator.sessionExpiresAt),
      step_up_until: toIso(operator.provenAt + OPERATOR_STEP_UP_MS),
      backup_codes_left: await ctx.operators.backupCodesLeft(operator),
    }), doc({ summary: "The signed-in operator and their session", description: AUTH, tags, auth: true, ok: { 200: ["OperatorMe", OperatorMe] }, errors: [404] }))
    .post("/auth/logout", async ({ operator, request, server, cookie }) => {
      await ctx.operators.logout(operator, requestInfo(request, server, ctx.config.trustProxy));
      cookie[OPERATOR_COOKIE]!.set({ value: "", maxAge: 0, expires: new Date(0), ...cookieAttributes });
      return { detail: "Signed out.", at: toIso(ctx.now()) };
    }, doc({ summary: "End this operator session and clear its cookie", description: AUTH, tags, auth: true, ok: { 200: ["OperatorDone", OperatorDone] }, errors: [404] }))
    .post("/auth/backup-codes", async ({ operator, request, server }) => ({
      codes: await ctx.operators.regenerateBackupCodes(operator, requestInfo(request, server, ctx.config.trustProxy)),
      detail: "Keep these 10 codes somewhere safe, apart from your password: each signs you in once when your authenticator app is not at hand. The earlier codes no longer work.",
    }), doc({
      summary: "Replace your backup codes with 10 new ones (shown once; the old ones stop working)",
      description: `A backup code (\`xxxx-xxxx\`) is accepted once at \`POST /api/v1/operator/auth/2fa/verify\` in place of the TOTP code; only keyed hashes are kept. Audited (\`backup_codes.regenerated\`). ${STEP_UP} ${AUTH}`,
      tags, auth: true, ok: { 200: ["OperatorBackupCodes", OperatorBackupCodes] }, errors: [404],
    }))
    .get("/auth/sessions", async ({ operator }) => {
      const rows = await ctx.operators.sessions(operator);
      return { items: rows.map((r) => ({ ...r, created_at: toIso(r.created_at), last_used_at: toIso(r.last_used_at), expires_at: toIso(r.expires_at) })) };
    }, doc({
      summary: "Your own open operator sessions, the latest used first; `current` marks this one",
      description: `Only the signed-in operator's own: another operator's sessions are never listed. ${AUTH}`,
      tags, auth: true, ok: { 200: ["OperatorSessions", OperatorSessions] }, errors: [404],
    }))
    .post("/auth/sessions/revoke-others", async ({ operator, request, server }) => {
      const ended = await ctx.operators.revokeOtherSessions(operator, requestInfo(request, server, ctx.config.trustProxy));
      return { detail: ended === 0 ? "No other session was open." : `Signed out of ${ended} other ${ended === 1 ? "session" : "sessions"}.`, ended, at: toIso(ctx.now()) };
    }, doc({
      summary: "Sign out everywhere else: end every session of yours but this one",
      description: `Audited (\`session.revoked_others\`). No step-up: it takes ways in away. ${AUTH}`,
      tags, auth: true, ok: { 200: ["OperatorRevokedOthers", OperatorRevokedOthers] }, errors: [404],
    }))
    .delete("/auth/sessions/:id", async ({ operator, params, request, server, cookie }) => {
      await ctx.operators.revokeSession(operator, requestInfo(request, server, ctx.config.trustProxy), params.id);
      if (params.id === operator.sessionId) cookie[OPERATOR_COOKIE]!.set({ value: "", maxAge: 0, expires: new Date(0), ...cookieAttributes });
      return { detail: params.id === operator.sessionId ? "This session has ended: sign in again to go on." : "The session has ended.", at: toIso(ctx.now()) };
    }, {
      params: OperatorSessionPath,
      ...doc({
        summary: "End one of your own sessions",
        description: `404 \`session_not_found\` for a session that is not yours or has ended. Audited (\`session.revoked\`). No step-up: it takes a way in away. ${AUTH}`,
        tags, auth: true, ok: { 200: ["OperatorDone", OperatorDone] }, errors: [404],
      }),
    })
    .post("/auth/reauthenticate", async ({ operator, body, request, server }) => {
      await ctx.operators.reauthenticate(operator, body.password, requestInfo(request, server, ctx.config.trustProxy));
      return { detail: "Password confirmed: you can do destructive actions for the next 10 minutes.", at: toIso(ctx.now()) };
    }, {
      body: OperatorReauthBody,
      ...doc({
        summary: "Confirm the password again (step-up) for destructive actions",
        description: `Limited as sign-in is; a wrong password counts toward the lock. ${AUTH}`,
        tags, auth: true, ok: { 200: ["OperatorDone", OperatorDone] }, errors: [404, 429],
      }),
    })
    .get("/overview", () => ctx.operatorConsole.overview(), doc({
      summary: "Counts across the server: organizations, mail waiting and failed, jobs running; this instance's requests per minute and, per hour, p99, 5xx answers, sign-ins and failures",
      description:
        "The requests per minute and the hourly figures are this instance's, kept in memory for 24 hours (empty after a restart; with several instances each shows its own: " +
        `Prometheus adds them up). A sign-in step counts once: a password then a code are two. ${AUTH}`,
      tags, auth: true, ok: { 200: ["ConsoleOverview", ConsoleOverview] }, errors: [404],
    }))
    .get("/organizations", ({ request }) => {
      const r = readList(request.url, (q) => ({ search: q.search("q") ?? "" }));
      return ctx.operatorConsole.organizations(r.search, r.paging);
    }, doc({
      summary: "Every organization, newest first, with members, deals and last activity",
      description: AUTH, tags, auth: true, ok: { 200: ["ConsoleOrganizationsPage", OrganizationsPage] }, errors: [404],
      parameters: listParameters([{ name: "q", description: "Part of the name or subdomain, any case", schema: { type: "string", maxLength: 200 } }]),
    }))
    .post("/organizations/:subdomain/disable", ({ operator, params, request, server }) =>
      ctx.operatorConsole.setDisabled(operator, requestInfo(request, server, ctx.config.trustProxy), params.subdomain, true), {
      params: OrganizationPath,
      ...doc({
        summary: "Disable an organization (as `suite tenant disable`): its data is kept, every request to it answers 403",
        description: `${STEP_UP} ${AUTH}`, tags, auth: true, ok: { 200: ["ConsoleOrganizationStatus", ConsoleOrganizationStatus] }, errors: [404],
      }),
    })
    .post("/organizations/:subdomain/enable", ({ operator, params, request, server }) =>
      ctx.operatorConsole.setDisabled(operator, requestInfo(request, server, ctx.config.trustProxy), params.subdomain, false), {
      params: OrganizationPath,
      ...doc({
        summary: "Enable a disabled organization again (as `suite tenant enable`)",
        description: `${STEP_UP} ${AUTH}`, tags, auth: true, ok: { 200: ["ConsoleOrganizationStatus", ConsoleOrganizationStatus] }, errors: [404],
      }),
    })
    .delete("/organizations/:id", async ({ operator, params, body, set }) => {
      const r = await ctx.operatorConsole.deleteOrganization(operator, params.id, body.subdomain);
      set.status = 202;
      return r;
    }, {
      params: OrganizationIdPath,
      body: ConsoleDeleteBody,
      ...doc({
        summary: "Delete an organization (as `suite tenant delete`): every row of it, after a final export; it answers 403 from now on",
        description:
          "The body's `subdomain` must be the organization's own (422 otherwise): typed again, so a wrong row is never deleted. The rows go in the background, " +
          "in short batches; the organization shows `being_deleted` in the list until it is gone. Its export is fetched once from `export_url` when the deletion ends. " +
          `Both steps are in the audit log (\`tenant.deletion_started\`, \`tenant.deleted\`). 404 \`tenant_not_found\`. ${STEP_UP} ${AUTH}`,
        tags, auth: true, ok: { 202: ["ConsoleDeletion", ConsoleDeletion] }, errors: [404],
      }),
    })
    .get("/exports/:token", async ({ operator, params, request, server }) => {
      const r = await ctx.operatorConsole.takeExport(operator, requestInfo(request, server, ctx.config.trustProxy), params.token);
      return new Response(r.stream, {
        headers: {
          "content-type": "application/x-tar",
          "content-disposition": `attachment; filename="${r.name}"`,
          "cache-control": "no-store",
          "x-content-type-options": "nosniff",
        },
      });
    }, { params: ExportPath, ...exportDoc() })
    .get("/mail", ({ request }) => {
      const r = readList(request.url, (q) => ({ status: q.literal("status", ["pending", "failed"] as const) }));
      return ctx.operatorConsole.mail(r.status, r.paging);
    }, doc({
      summary: "The mail queue: mail waiting, being sent or failed, newest first (recipients masked)",
      description: AUTH, tags, auth: true, ok: { 200: ["ConsoleMailPage", MailPage] }, errors: [404],
      parameters: listParameters([{ name: "status", description: "pending or failed; none: both (and mail being sent)", schema: { type: "string", enum: ["pending", "failed"] } }]),
    }))
    .post("/mail/test", async ({ operator, body, request, server }) => {
      await ctx.operatorConsole.sendTestMail(operator, requestInfo(request, server, ctx.config.trustProxy), body.to);
      return { detail: "The test mail is in the queue: the mail queue shows when it is sent, or why not.", at: toIso(ctx.now()) };
    }, {
      body: ConsoleTestMailBody,
      ...doc({
        summary: "Send a test mail: a plain mail to this address through the outbox, as every mail goes",
        description: `422 when \`to\` is not an email address. Without SUITE_SMTP_URL it waits in the queue. ${AUTH}`,
        tags, auth: true, ok: { 200: ["OperatorDone", OperatorDone] }, errors: [404],
      }),
    })
    .post("/mail/:id/retry", async ({ operator, params, request, server }) => {
      await ctx.operatorConsole.retryMail(operator, requestInfo(request, server, ctx.config.trustProxy), params.id);
      return { detail: "The mail will be sent now.", at: toIso(ctx.now()) };
    }, {
      params: MailPath,
      ...doc({
        summary: "Send a waiting mail now, without waiting for its next try",
        description: `Failed mail has lost its body (it held a live link) and cannot be sent again: discard it and ask for a new link. 404 \`mail_not_found\`. ${AUTH}`,
        tags, auth: true, ok: { 200: ["OperatorDone", OperatorDone] }, errors: [404],
      }),
    })
    .delete("/mail/:id", async ({ operator, params, request, server }) => {
      await ctx.operatorConsole.discardMail(operator, requestInfo(request, server, ctx.config.trustProxy), params.id);
      return { detail: "The mail was discarded.", at: toIso(ctx.now()) };
    }, {
      params: MailPath,
      ...doc({
        summary: "Discard a waiting or failed mail",
        description: `404 \`mail_not_found\`. ${STEP_UP} ${AUTH}`, tags, auth: true, ok: { 200: ["OperatorDone", OperatorDone] }, errors: [404],
      }),
    })
    .get("/backups", () => ctx.operatorBackups.view(), doc({
      summary: "Backups: the files in the backup folder, the one being made with its progress, the last outcome and the schedule",
      description: `SQLite only: on PostgreSQL (or an in-memory database) \`available\` is false and \`note\` says what to use instead (pg_dump, base backups). ${AUTH}`,
      tags, auth: true, ok: { 200: ["ConsoleBackups", ConsoleBackups] }, errors: [404],
    }))
    .post("/backups", async ({ operator, request, server, set }) => {
      const r = await ctx.operatorBackups.backUpNow(operator, requestInfo(request, server, ctx.config.trustProxy));
      set.status = 202;
      return r;
    }, doc({
      summary: "Back up now: `suite backup` in a child process, in the background (its progress in `GET /backups`)",
      description:
        "The copy and its integrity check run in a process of their own, at a lower priority: no request waits for them. Keys and secrets stay out of the file, as with `suite backup`. " +
        `409 \`backup_running\` while one is being made; 409 \`backups_unavailable\` on PostgreSQL or an in-memory database; 409 \`backup_folder_unusable\` when the folder cannot be made or written. ${AUTH}`,
      tags, auth: true, ok: { 202: ["ConsoleBackupStarted", ConsoleBackupStarted] }, errors: [404],
    }))
    .put("/backups/schedule", ({ operator, body, request, server }) =>
      ctx.operatorBackups.saveSchedule(operator, requestInfo(request, server, ctx.config.trustProxy), body), {
      body: ConsoleBackupScheduleBody,
      ...doc({
        summary: "Set the backup schedule: daily at a time (UTC), keeping the newest `keep` backups",
        description:
          "Saved in the database's settings; from then on it wins over SUITE_BACKUP_DIR's SUITE_BACKUP_EVERY and SUITE_BACKUP_KEEP (the folder stays SUITE_BACKUP_DIR's). " +
          `After each backup the oldest beyond \`keep\` are removed. 422 when \`at_utc\` is not HH:MM. ${STEP_UP} ${AUTH}`,
        tags, auth: true, ok: { 200: ["ConsoleBackups", ConsoleBackups] }, errors: [404],
      }),
    })
    .post("/backups/:name/link", ({ operator, params, request, server }) =>
      ctx.operatorBackups.link(operator, requestInfo(request, server, ctx.config.trustProxy), params.name), {
      params: BackupPath,
      ...doc({
        summary: "A link to download a backup: one fetch, within 10 minutes, by this operator",
        description: `A backup holds every organization's data. 404 \`backup_not_found\`. ${STEP_UP} ${AUTH}`,
        tags, auth: true, ok: { 200: ["ConsoleBackupLink", ConsoleBackupLink] }, errors: [404],
      }),
    })
    .get("/backup-downloads/:token", async ({ operator, params, request, server }) => {
      const r = await ctx.operatorBackups.takeDownload(operator, requestInfo(request, server, ctx.config.trustProxy), params.token);
      return new Response(Bun.file(r.path).stream(), {
        headers: {
          "content-type": "application/vnd.sqlite3",
          "content-disposition": `attachment; filename="${r.name}"`,
          "cache-control": "no-store",
          "x-content-type-options": "nosniff",
        },
      });
    }, { params: ExportPath, ...backupDownloadDoc() })
    .delete("/backups/:name", async ({ operator, params, request, server }) => {
      await ctx.operatorBackups.remove(operator, requestInfo(request, server, ctx.config.trustProxy), params.name);
      return { detail: "The backup was deleted.", at: toIso(ctx.now()) };
    }, {
      params: BackupPath,
      ...doc({
        summary: "Delete a backup file",
        description: `404 \`backup_not_found\` (also for the one being made). ${STEP_UP} ${AUTH}`,
        tags, auth: true, ok: { 200: ["OperatorDone", OperatorDone] }, errors: [404],
      }),
    })
    .get("/jobs", ({ request }) => ctx.operatorConsole.jobs(readList(request.url, () => ({})).paging), doc({
      summary: "CRM import and export jobs of every organization, newest first (read-only)",
      description: AUTH, tags, auth: true, ok: { 200: ["ConsoleJobsPage", JobsPage] }, errors: [404], parameters: listParameters([]),
    }))
    .get("/server", () => ctx.operatorConsole.server(), doc({
      summary: "The server: version, uptime, database and WAL size, key file, settings in effect (never a secret's value)",
      description: AUTH, tags, auth: true, ok: { 200: ["ConsoleServer", ConsoleServer] }, errors: [404],
    }))
    .get("/audit", ({ request }) => ctx.operatorConsole.audit(readList(request.url, () => ({})).paging), doc({
      summary: "The operators' audit log, newest first: sign-ins and every action",
      description: AUTH, tags, auth: true, ok: { 200: ["ConsoleAuditPage", AuditPage] }, errors: [404], parameters: listParameters([]),
    }));
};
