import type { RequestInfo } from "./auth/service";
import { type Logger, stdoutLogger } from "./kernel/logger";
import { createAuthService } from "./auth/service";
import type { AuthDeps } from "./auth/deps";
import { type SecondFactorGate, createSignIn } from "./auth/sign-in";
import { createTokens } from "./auth/tokens";
import { createSealer, createSecretBox } from "./security/secret-box";
import { createProtocol } from "./auth/sign-in-providers/protocol";
import { type OutboundSettings, outboundGuardFor } from "./outbound/guard";
import { createProvidersService } from "./auth/sign-in-providers/providers-service";
import { createFlowService } from "./auth/sign-in-providers/flow-service";
import { createTwoFactorService } from "./auth/two-factor/service";
import { createPasskeysService } from "./auth/passkeys/service";
import type { Config } from "./config";
import { createDealsService } from "./crm/deals-service";
import { createActivitiesService } from "./crm/activities-service";
import { createViewsService } from "./crm/views-service";
import { createCrmService } from "./crm/service";
import { createAuditService } from "./security-log/service";
import { createIdempotencyService } from "./idempotency/service";
import type { AuditEntry } from "./security/repo";
import { type Pg, openStores } from "./stores";
import type { Stores, StoresOptions } from "./stores/interface";
import type { Db } from "./db/database";
import { watchDisk } from "./db/disk-room";
import { createPipelineService } from "./crm/pipeline-service";
import { type Mailer, createMailSender, noMailSender } from "./mail/sender";
import { createSmtpTransport, smtpSecrets } from "./mail/smtp";
import { createMagicLinkService } from "./auth/magic-link/service";
import { createEmailVerificationService } from "./auth/email/service";
import { createPasswordService } from "./auth/password/service";
import { createNewDeviceService } from "./auth/new-device/service";
import { type PasswordHasher, createPasswordHasher } from "./security/passwords";
import { LIMITS, type Limits, createRateLimiter } from "./security/rate-limit";
import { createTenantsService } from "./organization/service";
import { createOrganizationDeletion } from "./organization/delete";
import { createDeletionExports } from "./organization/deletion-exports";
import { type ServerAudit, serverAuditTo, serverAuditToLog } from "./organization/server-audit";
import { serverAuditToOperatorAudit } from "./operator/server-audit-sink";
import { dirname, join, resolve } from "node:path";
import { tmpdir } from "node:os";
import { createTlsAskService } from "./tls/service";
import { createTransferService } from "./crm/export-import/export-service";
import { createJobsService } from "./crm/export-import/jobs-service";
import { createBulkService } from "./crm/bulk-service";
import { createInvitationsService } from "./team/invitations-service";
import { createUsersService } from "./team/service";
import { createMetrics } from "./metrics/recorder";
import { registerServerGauges } from "./metrics/server-gauges";
import pkg from "../package.json";
import { createMembersService } from "./team/members-service";
import { createSupportService } from "./team/support-service";
import { createEventsService } from "./events/service";
import { createEventsBus } from "./events/bus";
import { existsSync } from "node:fs";
import { settingsInEffect } from "./config";
import { keyFileOf } from "./security/key-file";
import { createOperatorService } from "./operator/service";
import { createConsoleService } from "./operator/console-service";
import { createConsoleBackups } from "./operator/console-backups";
import { createBackups } from "./cli/backup-schedule";
import { createRequestRate } from "./operator/request-rate";
import { createWebhooksService } from "./webhooks/service";
import { type DeliverySettings, DEFAULT_DELIVERY_SETTINGS, createDeliverySender } from "./webhooks/delivery";
import { webhookDisabledMail } from "./webhooks/disabled-mail";
import { OutboundError } from "./outbound/guard";

export interface ContextOptions extends StoresOptions {
  config: Config;
  /** Stores opened already (e.g. by `suite serve`); otherwise openStores(config, this) opens them. */
  stores?: Stores & { db?: Db; pg?: Pg };
  log?: Logger;
  now?: () => number;
  limits?: Partial<Limits>;
  /** The server passes argon2 on threads of its own; the bad-input fuzz a cheap stand-in. Default: in-process argon2. */
  hasher?: PasswordHasher;
  /** Tests: how often a live event stream sends its heartbeat (and checks its session again); default 25 s. */
  eventsHeartbeatMs?: number;
  /**
   * Where the server keeps files beside its data (the final exports of deleted organizations):
   * default the database file's folder (the key file's folder on PostgreSQL too).
   */
  dataDir?: string;
  /** Where server audit entries go besides the log (the operator console's table, once it exists). */
  serverAudit?: ServerAudit;
  /** Tests: the outbound guard's resolver or certificate authority; everything else comes from the config. */
  outbound?: Pick<Partial<OutboundSettings>, "resolve" | "ca">;
  /** Tests: shorter webhook timeouts, backoff and polling (src/webhooks/delivery.ts has the defaults). */
  webhooks?: Partial<DeliverySettings>;
}

/** Builds every service once on the stores, wired together: the one place that knows them all. */
export function createContext(opts: ContextOptions) {
  const { config } = opts;
  const stores = opts.stores ?? openStores(config, opts);
  const { security, sessions, users, crm, mail, tenants } = stores;
  const now = opts.now ?? Date.now;
  const log = opts.log ?? stdoutLogger;
  const limits: Limits = { ...LIMITS, ...opts.limits };
  // The SQLite file's filesystem keeps a reserve: imports and jobs are refused below it (507).
  const unwatchDisk = !config.databaseUrl && config.db !== ":memory:" && !opts.db ? watchDisk(config.db, config.diskReserveMb) : () => {};

  // SUITE_JWT_SECRET and SUITE_ENCRYPTION_KEY win over the stored keys when set.
  const keys = {
    jwtSecret: config.jwtSecret ?? stores.keys.jwt_secret,
    refreshKey: stores.keys.refresh_key,
    encryptionKey: config.encryptionKey ?? stores.keys.encryption_key,
  };
  const tokens = createTokens(keys.jwtSecret, keys.refreshKey, now);
  const hasher = opts.hasher ?? createPasswordHasher(config.hashConcurrency);
  const metrics = createMetrics(pkg.version);
  const limiter = createRateLimiter(security, now, (limit) => metrics.refused(limit.name));
  registerServerGauges(metrics, { config, mail, jobs: stores.jobs, webhooks: stores.webhooks, now, pgPool: stores.pg?.pool });
  const audit = (e: AuditEntry) => security.audit(e, now());

  // Every sign-in that opens a session tells the new-device service (declared below) which device it came from.
  const afterSignIn: AuthDeps["afterSignIn"] = (user, method, session, req) => newDevice.signedIn(user, method, session, req);
  const auth = createAuthService({ config, now, sessions, users, tokens, hasher, limiter, limits, audit, afterSignIn });
  const accountTokens = stores.accountTokens;
  // Signup mails the new admin a verification link (declared below, called after signup commits).
  const afterSignup = (tenantId: string, userId: string, req: RequestInfo) => emailVerification.afterSignup(tenantId, userId, req);
  const tenantsService = createTenantsService({ now, tenants, hasher, limiter, limits, auth, afterSignup });
  // Without SUITE_SMTP_URL there is no sender: mail waits in the outbox for `suite mail list`.
  const mailer: Mailer = config.smtpUrl
    ? createMailSender({ repo: mail, transport: createSmtpTransport(config.smtpUrl), from: config.mailFrom, now, log, secrets: smtpSecrets(config.smtpUrl) })
    : noMailSender;
  const invitations = createInvitationsService({
    // An invitation to a disabled organization cannot be accepted (403 tenant_disabled).
    config, now, invitations: stores.invitations, users, tenants, readTenant: (id) => tenantsService.readInService(id), hasher, limiter, limits, auth, mailer,
  });
  const crmService = createCrmService({ now, repo: crm });
  const pipeline = createPipelineService({ now, repo: crm, stages: stores.stages });
  const deals = createDealsService({ now, repo: crm, deals: crm.deals, query: stores.dealsQuery });
  const activities = createActivitiesService({ now, repo: crm });
  const views = createViewsService({ now, repo: crm });
  const usersService = createUsersService({ users });
  const members = createMembersService({ now, members: stores.members, security, limiter, limits, requireRecentProof: auth.requireRecentProof });
  const jobs = createJobsService({ now, repo: crm, transfer: stores.transfer, jobs: stores.jobs, limiter, limits, log, ended: metrics.jobEnded });
  const bulk = createBulkService({ now, repo: crm, bulk: stores.bulkDeals, jobs: stores.jobs, tracker: jobs, log, ended: metrics.jobEnded });
  const transfer = createTransferService({ now, repo: crm, transfer: stores.transfer, exportSlot: jobs.exportSlot });
  // The final export of a deleted organization: what its admins would download, as the operator.
  const dataDir = opts.dataDir ?? (config.db === ":memory:" ? join(tmpdir(), `suite-data-${process.pid}`) : dirname(resolve(config.db)));
  // Server audit entries go to the log and to the console's audit table, whoever deleted (the command line or the console).
  const serverAudit = serverAuditTo(serverAuditToLog(log), serverAuditToOperatorAudit(stores.operators), ...(opts.serverAudit ? [opts.serverAudit] : []));
  const organizationDeletion = createOrganizationDeletion({
    now, log, tenants, store: stores.tenantDeletion, exports: createDeletionExports({ dataDir, now }),
    serverAudit,
    exportCsv: (tenantId, subdomain, kind) => {
      const operator = { userId: "", tenantId, sessionId: "", role: "admin" as const, email: "", subdomain, provenAt: now() };
      if (kind === "deals") return transfer.exportDeals(operator, { search: null, stages: null, sortBy: "created_at", sortDir: "asc", assigned_to: null, unassigned: false, mine: false });
      return kind === "accounts" ? transfer.exportAccounts(operator, { search: null }) : transfer.exportContacts(operator, { search: null });
    },
  });
  const idempotency = createIdempotencyService({ now, store: stores.idempotency });
  // TOTP secrets are sealed under SUITE_ENCRYPTION_KEY, or the key file's key.
  const secretBox = createSecretBox(keys.encryptionKey);
  const twoFactor = createTwoFactorService({ config, now, repo: stores.twoFactor, box: secretBox, users, tenants, tokens, hasher, limiter, limits, auth, audit,
    passkeyCount: async (tenantId, userId) => (await stores.passkeys.list(tenantId, userId)).length,
  });
  // Every first factor (password, with or without a tenant named; magic link) ends here: a disabled
  // organization's members get 403 tenant_disabled, not a session or a challenge.
  const secondFactorGate: SecondFactorGate = async (user, method, req) => {
    await tenantsService.requireInService(user.tenant_id);
    return twoFactor.challenge(user, method, req);
  };
  const signIn = createSignIn(auth, secondFactorGate);
  const magicLinks = createMagicLinkService({ config, now, log, limiter, limits, users, links: stores.magicLinks, security, mailer });
  const emailVerification = createEmailVerificationService({ config, now, log, limiter, limits, tokens: accountTokens, security, mailer });
  // Identity providers: client secrets and flows' PKCE verifiers sealed under keys of their own.
  // Every request to a host someone else chose goes through this one guard (src/outbound).
  const outbound = outboundGuardFor(config, opts.outbound);
  const protocol = createProtocol(config, outbound);
  const providers = createProvidersService({
    config, now, repo: stores.oidc, users, sealer: createSealer(keys.encryptionKey, "idp-client-secret/v1"), requireRecentProof: auth.requireRecentProof,
    issuerRefused: protocol.issuerRefused,
  });
  const oidcFlow = createFlowService({
    config, now, repo: stores.oidc, users, providers, protocol, sealer: createSealer(keys.encryptionKey, "oauth-flow/v1"), signIn, limiter, limits, audit, log,
    tenantInService: (id) => tenantsService.requireInService(id), requireRecentProof: auth.requireRecentProof,
  });
  const passkeys = createPasskeysService({
    config, now, repo: stores.passkeys, users, tenants, auth, limiter, limits, audit,
    tenantInService: (id) => tenantsService.requireInService(id),
    identities: async (tenantId, userId) => (await stores.oidc.identitiesOfUser(tenantId, userId, 1, 0)).length,
    twoFactorOn: async (tenantId, userId) => (await stores.twoFactor.get({ tenantId, userId }))?.enabled_at != null,
  });
  const events = createEventsService({
    now, store: stores.events, bus: createEventsBus(stores.events),
    hasModule: (tenantId, module) => tenants.hasModule(tenantId, module),
    authenticate: (token) => auth.authenticate(token),
    retentionMs: config.eventsRetention * 1000,
    heartbeatMs: opts.eventsHeartbeatMs ?? 25_000,
  });
  // Webhooks: endpoint secrets sealed under a key of their own; every delivery through the outbound guard.
  const webhookSealer = createSealer(keys.encryptionKey, "webhook-secret/v1");
  const webhookSender = createDeliverySender({
    now, store: stores.webhooks, sealer: webhookSealer, fetch: outbound.guardedFetch, log,
    settings: { ...DEFAULT_DELIVERY_SETTINGS, timeoutMs: config.webhookTimeout * 1000, ...opts.webhooks },
    disabledMails: (e, notice) =>
      notice.recipients.map((recipient) => webhookDisabledMail(config, { ...e, tenantName: notice.tenantName, subdomain: notice.subdomain, recipient })),
    mailed: () => mailer.kick(),
  });
  const webhooks = createWebhooksService({
    now, store: stores.webhooks, sealer: webhookSealer, allowHttp: config.webhookHttp, requireRecentProof: auth.requireRecentProof,
    addressRefused: async (url) => {
      try {
        await outbound.check(url, "webhook", 5_000);
        return false;
      } catch (e) {
        // Only a refused address is the caller's to fix; a name that does not resolve now may later.
        return e instanceof OutboundError && e.reason === "refused_address";
      }
    },
    kick: () => webhookSender.kick(),
  });
  const support = createSupportService({ now, users, members: stores.members, passwords: stores.passwords, sessions, support: stores.support, hasher, limiter, limits });
  const password = createPasswordService({
    config, now, log, limiter, limits, hasher, users, tokens: accountTokens, repo: stores.passwords, security, mailer,
    tenantInService: (id) => tenantsService.requireInService(id),
    // At most 20 named in a mail; the review page lists them all.
    identities: async (tenantId, userId) => stores.oidc.identitiesOfUser(tenantId, userId, 20, 0),
  });
  // The server's operators (src/operator): accounts apart from every organization's, and their console.
  const operators = createOperatorService({ now, store: stores.operators, hasher, limiter, limits, box: secretBox });
  const requestRate = createRequestRate(now);
  const operatorConsole = createConsoleService({
    now, store: stores.operators, operators, requestRate,
    setDisabled: (subdomain, disabled, by) => tenantsService.setDisabled(subdomain, disabled, by),
    mailBacklog: () => mail.backlog(),
    enqueueMail: (m) => mail.enqueue(m, now()),
    deletion: {
      tenantById: (id) => tenants.byId(id),
      start: (subdomain, by) => organizationDeletion.start(subdomain, by),
      // The batches outlive the request; a failure is logged and the marker stays for the next start (resumeAll).
      runInBackground: (tenantId) => {
        organizationDeletion.run(tenantId).catch((e: unknown) => log({ level: "error", msg: "organization deletion failed", tenant_id: tenantId, error: String(e) }));
      },
      pending: async () => (await stores.tenantDeletion.pending()).map((m) => ({ tenantId: m.tenantId, exportToken: (JSON.parse(m.state) as { export_token: string | null }).export_token })),
      claimExport: (token) => organizationDeletion.exports.claim(token),
    },
    kickMail: () => mailer.kick(),
    server: async () => ({
      version: pkg.version,
      uptime_seconds: Math.floor(process.uptime()),
      database: stores.kind,
      key_file_present: config.db !== ":memory:" && existsSync(keyFileOf(config.db)),
      settings: settingsInEffect(config),
    }),
  });
  // Backups while serving (SQLite): the schedule and the console's "Back up now", one child process at a time.
  const backups = createBackups({
    config, log, now, postgres: stores.kind === "postgres",
    readSaved: () => stores.operators.backupSchedule(),
    save: (json) => stores.operators.setBackupSchedule(json),
  });
  const operatorBackups = createConsoleBackups({ now, backups, operators });
  const newDevice = createNewDeviceService({
    config, now, log, store: stores.newDevices, security, limiter, limits, mailer,
    target: (tenantId, userId) => accountTokens.targetById(tenantId, userId),
    mailReset: (target, req) => password.mailResetTo(target, req),
  });

  return {
    /** Distinguishes this context's Elysia plugins from another's in the same process (tests). */
    id: Math.random().toString(36).slice(2),
    config,
    /**
     * A test seam only: the SQLite connection under the stores (undefined on PostgreSQL). Tests
     * reach into it to set up or inspect rows; nothing in src/ may use it.
     */
    db: stores.db as Db,
    /** The PostgreSQL test seam, as `db` is SQLite's: the pool under the stores (null on SQLite). Nothing in src/ may use it. */
    pg: stores.pg ?? null,
    now,
    log,
    limits,
    /** The stores, by their interfaces: routes resolve a tenant by subdomain through them, tests read rows. */
    repos: stores as Stores,
    tokens,
    /** The keys in use (tests sign with them; nothing else reads them). */
    keys,
    hasher,
    limiter,
    audit,
    auth,
    /** Password login and magic-verify go through here: a session, or the 2FA challenge. */
    signIn,
    tenants: tenantsService,
    /** Deleting an organization (`suite tenant delete`, the operator console): export, batches, server audit entry. */
    organizationDeletion,
    /** Invite, resend, accept, list and revoke invitations. */
    invitations,
    /** Accounts and contacts. */
    crm: crmService,
    /** The pipeline's stages: everyone reads them, admins create, change, reorder and delete them. */
    pipeline,
    /** Reading the audit log (admins): pages and CSV downloads. */
    auditLog: createAuditService({ now, repo: stores.auditLog }),
    /** The organization's event log: the list, the live stream (SSE) and the retention sweep. */
    events,
    /** The organization's signed webhooks (admins) and their delivery log. */
    webhooks,
    /** Sends due webhook deliveries: `suite serve` starts it. */
    webhookSender,
    /** Deals and the deal list. */
    deals,
    /** A deal's timeline and notes. */
    activities,
    /** Saved views of the deal list: personal and shared, and each member's default. */
    views,
    /** CSV export of deals, accounts and contacts. */
    transfer,
    /** Idempotency-Keys of creates: one answer per key, organization and user (src/idempotency/create-once.ts). */
    idempotency,
    /** CSV imports as background jobs: upload, progress, recovery after a restart. */
    jobs,
    /** Bulk changes of deals and their undo, as jobs beside the imports. */
    bulk,
    /** The team: the member list and profiles. */
    users: usersService,
    /** Members changed by themselves or their admins: name, role, profile, removal, 2FA reset, unlock. */
    members,
    /** Helping a user from the command line (`suite user …`): the operator's list, password and 2FA resets, unlock, removal. */
    support,
    /** Outbox delivery: `suite serve` starts it; routes kick it after committing a mail. */
    mail: mailer,
    magicLinks,
    twoFactor,
    /** Passkeys (auth/passkeys/): register, list, rename, remove; sign-in and step-up with one. */
    passkeys,
    /** Forgotten password, reset and change (auth/password/). */
    password,
    /** The new-device mail and "this wasn't me" (auth/new-device/). */
    newDevice,
    /** Address verification (auth/email/). */
    emailVerification,
    /** Sign-in with identity providers (auth/sign-in-providers/): the organization's providers, and the flow. */
    oidc: { providers, flow: oidcFlow },
    /** The server's operators: `suite operator …`, and sign-in to their console (src/operator). */
    operators,
    /** The operator console's views and actions across organizations. */
    operatorConsole,
    /** The server's backups: the schedule (started by serve) and a backup made now. */
    backups,
    /** The operator console's backups screen. */
    operatorBackups,
    /** This instance's requests per minute, the last 24 hours (http/core.ts counts each). */
    requestRate,
    /** Caddy's on-demand TLS question: may the proxy get a certificate for this host (tls/). */
    tls: createTlsAskService({ config, tenants }),
    /** Prometheus metrics of this process (GET /api/v1/metrics). */
    metrics,
    /** Whether the database answers (GET /health). */
    ping: () => stores.ping(),
    /** Resolves once every commit so far is on disk: an answer after a write awaits it (http/core.ts). */
    durable: () => stores.durable(),
    /** PostgreSQL: folds the deal search's pending counter rows while the server runs (SQLite's fold is started on ctx.db). */
    startSearchFold: stores.startSearchFold,
    /** Periodic clean-up: finished rate-limit windows, sessions a day past their end, expired Idempotency-Keys. */
    async housekeep(): Promise<void> {
      const t = now();
      await security.sweep(t);
      await sessions.purgeExpired(t - 86_400_000);
      await stores.magicLinks.purgeExpired(t - 86_400_000);
      await accountTokens.purgeExpired(t - 86_400_000);
      await stores.oidc.purgeExpired(t);
      await stores.passkeys.purgeExpired(t);
      await mail.purgeFinished(t - 30 * 86_400_000);
      await idempotency.purgeExpired(t);
      await newDevice.purgeExpired(t);
      await events.sweep(t);
      // Finished deliveries are kept as long as the events they carried.
      while ((await stores.webhooks.sweepStep(t - config.eventsRetention * 1000, 2000)) === 2000) await new Promise((r) => setImmediate(r));
      await organizationDeletion.exports.sweep();
      await operators.purgeExpired(t);
    },
    close: () => {
      void webhookSender.stop();
      const stopping = events.close();
      metrics.close();
      unwatchDisk();
      // A backup under way is stopped (its child ended, its temp file removed) before the stores close.
      const backingUp = backups.state().running ? backups.stop() : null;
      // The listening connection (PostgreSQL) ends before its pool closes.
      const first = [stopping, backingUp].filter((p): p is Promise<void> => p !== null);
      return first.length > 0 ? Promise.all(first).then(() => stores.close()) : stores.close();
    },
  };
}

export type Context = ReturnType<typeof createContext>;
