import { createSessionsRepo } from "./auth/repo";
import type { RequestInfo } from "./auth/service";
import { createAuthService } from "./auth/service";
import { type SecondFactorGate, createSignIn } from "./auth/sign-in";
import { createTokens } from "./auth/tokens";
import { createTwoFactorRepo } from "./auth/two-factor/repo";
import { createSealer, createSecretBox } from "./auth/two-factor/secret-box";
import { createOidcRepo } from "./auth/oidc/repo";
import { createProtocol } from "./auth/oidc/protocol";
import { createProvidersService } from "./auth/oidc/providers-service";
import { createFlowService } from "./auth/oidc/flow-service";
import { createTwoFactorService } from "./auth/two-factor/service";
import type { Config } from "./config";
import { createDealsQuery } from "./crm/deals-query";
import { createDealsService } from "./crm/deals-service";
import { createCrmRepo } from "./crm/repo";
import { createCrmService } from "./crm/service";
import { createAuditRepo } from "./audit/repo";
import { createAuditService } from "./audit/service";
import { createStagesRepo } from "./crm/stages-repo";
import { createStagesService } from "./crm/stages-service";
import { createMailRepo } from "./mail/repo";
import { type Mailer, createMailSender, noMailSender } from "./mail/sender";
import { createSmtpTransport, smtpSecrets } from "./mail/smtp";
import { createMagicLinkService } from "./auth/magic-link/service";
import { createMagicLinksRepo } from "./auth/magic-link/repo";
import { createAccountTokensRepo } from "./auth/email/repo";
import { createEmailVerificationService } from "./auth/email/service";
import { createPasswordRepo } from "./auth/password/repo";
import { createPasswordService } from "./auth/password/service";
import { type Db, openDatabase } from "./db/database";
import { type WalSync, startGroupCommit } from "./db/group-commit";
import { CURRENT_PLAN, migrate } from "./db/migrate";
import { type PasswordHasher, createPasswordHasher } from "./security/passwords";
import { LIMITS, type Limits, createRateLimiter } from "./security/rate-limit";
import { generateKeys, keyFileOf, loadServerKeys, moveStoredKeys } from "./security/key-file";
import { type AuditEntry, createKeyStore, createSecurityRepo } from "./security/repo";
import { createTenantsRepo } from "./tenants/repo";
import { createTenantsService } from "./tenants/service";
import { createUsersRepo } from "./users/repo";
import { createTransferRepo } from "./crm/transfer-repo";
import { createTransferService } from "./crm/transfer-service";
import { createInvitationsRepo } from "./users/invitations-repo";
import { createInvitationsService } from "./users/invitations-service";
import { createUsersService } from "./users/service";
import { createMembersRepo } from "./users/members-repo";
import { createMembersService } from "./users/members-service";
import { createSupportRepo } from "./users/support-repo";
import { createSupportService } from "./users/support-service";

/** One JSON object per line. Never given a password, token, code, cookie or mailed link. */
export type Logger = (line: Record<string, unknown>) => void;

export const stdoutLogger: Logger = (line) => process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...line })}\n`);

export interface ContextOptions {
  config: Config;
  /** An already open database (tests pass ":memory:" ones); otherwise config.db is opened and migrated. */
  db?: Db;
  log?: Logger;
  now?: () => number;
  limits?: Partial<Limits>;
  /** The server passes argon2 on threads of its own; the bad-input fuzz a cheap stand-in. Default: in-process argon2. */
  hasher?: PasswordHasher;
  /**
   * How commits reach the disk before an answer is sent (see group-commit.ts). The server passes
   * walDatasync; without it every commit fsyncs in place (synchronous=FULL).
   */
  walSync?: (file: string) => WalSync;
}

/** Builds every repo and service once, wired together: the one place that knows them all. */
export function createContext(opts: ContextOptions) {
  const { config } = opts;
  const db = opts.db ?? openDatabase(config.db);
  const keyFile = opts.db || config.db === ":memory:" ? null : config.db;
  // An earlier release's keys leave the database before a migration copies it to `.v<N>.bak`.
  const moveKeys = () => void (keyFile && moveStoredKeys(keyFileOf(keyFile), createKeyStore(db)));
  migrate(db, CURRENT_PLAN, opts.db ? undefined : config.db, moveKeys);
  const now = opts.now ?? Date.now;
  const log = opts.log ?? stdoutLogger;
  const limits: Limits = { ...LIMITS, ...opts.limits };

  const commits = opts.walSync && !opts.db && config.db !== ":memory:" ? startGroupCommit(db, opts.walSync(config.db)) : null;
  const security = createSecurityRepo(db);
  const sessions = createSessionsRepo(db, { security });
  const users = createUsersRepo(db);
  const crm = createCrmRepo(db);
  const mail = createMailRepo(db);
  const magicLinksRepo = createMagicLinksRepo(db);
  const tenants = createTenantsRepo(db, { users, crm, sessions, security });

  // Generated keys live in `<db>.keys` beside the database, never in it (security/key-file.ts); an
  // in-memory database keeps them in memory. SUITE_JWT_SECRET and SUITE_ENCRYPTION_KEY win when set.
  const stored = keyFile ? loadServerKeys(keyFile, createKeyStore(db)) : generateKeys();
  const keys = {
    jwtSecret: config.jwtSecret ?? stored.jwt_secret,
    refreshKey: stored.refresh_key,
    encryptionKey: config.encryptionKey ?? stored.encryption_key,
  };
  const tokens = createTokens(keys.jwtSecret, keys.refreshKey, now);
  const hasher = opts.hasher ?? createPasswordHasher(config.hashConcurrency);
  const limiter = createRateLimiter(security, now);
  const audit = (e: AuditEntry) => security.audit(e, now());

  const auth = createAuthService({ config, now, sessions, users, tokens, hasher, limiter, limits, audit });
  const accountTokens = createAccountTokensRepo(db, { security });
  // Signup mails the new admin a verification link (declared below, called after signup commits).
  const afterSignup = (tenantId: string, userId: string, req: RequestInfo) => emailVerification.afterSignup(tenantId, userId, req);
  const tenantsService = createTenantsService({ now, tenants, hasher, limiter, limits, auth, afterSignup });
  // Without SUITE_SMTP_URL there is no sender: mail waits in the outbox for `suite mail list`.
  const mailer: Mailer = config.smtpUrl
    ? createMailSender({ repo: mail, transport: createSmtpTransport(config.smtpUrl), from: config.mailFrom, now, log, secrets: smtpSecrets(config.smtpUrl) })
    : noMailSender;
  const invitationsRepo = createInvitationsRepo(db, { users, sessions, security, mail });
  const invitations = createInvitationsService({
    // An invitation to a disabled organization cannot be accepted (403 tenant_disabled).
    config, now, invitations: invitationsRepo, users, tenants, readTenant: (id) => tenantsService.readInService(id), hasher, limiter, limits, auth, mailer,
  });
  const crmService = createCrmService({ now, repo: crm });
  const stagesService = createStagesService({ now, repo: crm, stages: createStagesRepo(db, { security }) });
  const deals = createDealsService({ now, repo: crm, deals: crm.deals, query: createDealsQuery(db) });
  const usersService = createUsersService({ users });
  // A renamed user shows at once in every deal assigned to them (CONTRACT §10b); a removed one's deals move in the removal's transaction.
  const membersRepo = createMembersRepo(db, { security, dealsReassignedInTx: (...a) => crm.dealsReassignedInTx(...a) });
  const members = createMembersService({ now, members: membersRepo, security, limiter, limits, renamedInTx: (...a) => crm.assigneeRenamedInTx(...a) });
  const transfer = createTransferService({ now, repo: crm, transfer: createTransferRepo(db), auditInTx: security.auditInTx });
  const twoFactorRepo = createTwoFactorRepo(db, { security });
  // TOTP secrets are sealed under SUITE_ENCRYPTION_KEY, or the key file's key.
  const secretBox = createSecretBox(keys.encryptionKey);
  const twoFactor = createTwoFactorService({ config, now, repo: twoFactorRepo, box: secretBox, users, tenants, tokens, hasher, limiter, limits, auth, audit });
  // Every first factor (password, with or without a tenant named; magic link) ends here: a disabled
  // organization's members get 403 tenant_disabled, not a session or a challenge.
  const secondFactorGate: SecondFactorGate = async (user, method, req) => {
    await tenantsService.requireInService(user.tenant_id);
    return twoFactor.challenge(user, method, req);
  };
  const signIn = createSignIn(auth, secondFactorGate);
  const magicLinks = createMagicLinkService({ db, config, now, log, limiter, limits, users, mail, links: magicLinksRepo, security, mailer });
  const emailVerification = createEmailVerificationService({ config, now, log, limiter, limits, tokens: accountTokens, mail, security, mailer });
  // Identity providers: client secrets and flows' PKCE verifiers sealed under keys of their own.
  const oidcRepo = createOidcRepo(db, { users, auditInTx: security.auditInTx });
  const providers = createProvidersService({
    config, now, repo: oidcRepo, users, sealer: createSealer(keys.encryptionKey, "idp-client-secret/v1"), requireRecentProof: auth.requireRecentProof,
  });
  const oidcFlow = createFlowService({
    config, now, repo: oidcRepo, users, providers, protocol: createProtocol(config), sealer: createSealer(keys.encryptionKey, "oauth-flow/v1"), signIn, limiter, limits, audit, log,
    tenantInService: (id) => tenantsService.requireInService(id),
  });
  const passwordRepo = createPasswordRepo(db, { security, tokens: accountTokens });
  const support = createSupportService({ now, users, members: membersRepo, passwords: passwordRepo, sessions, support: createSupportRepo(db), hasher, limiter, limits });
  const password = createPasswordService({
    config, now, log, limiter, limits, hasher, users, tokens: accountTokens, repo: passwordRepo, mail, security, mailer,
    tenantInService: (id) => tenantsService.requireInService(id),
  });

  return {
    /** Distinguishes this context's Elysia plugins from another's in the same process (tests). */
    id: Math.random().toString(36).slice(2),
    config,
    db,
    now,
    log,
    limits,
    repos: { security, sessions, users, crm, tenants, mail, members: membersRepo, magicLinks: magicLinksRepo, invitations: invitationsRepo, twoFactor: twoFactorRepo, accountTokens, oidc: oidcRepo },
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
    /** Invite, resend, accept, list and revoke invitations. */
    invitations,
    /** Pipeline stages, accounts, contacts, and the CRM module check. */
    crm: crmService,
    /** Changing, reordering and deleting pipeline stages (admins). */
    stages: stagesService,
    /** Reading the audit log (admins): pages and CSV downloads. */
    auditLog: createAuditService({ now, repo: createAuditRepo(db) }),
    /** Deals and the deal list. */
    deals,
    /** CSV export and import of deals, accounts and contacts. */
    transfer,
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
    /** Forgotten password, reset and change (auth/password/). */
    password,
    /** Address verification (auth/email/). */
    emailVerification,
    /** Sign-in with identity providers (auth/oidc/): the organization's providers, and the flow. */
    oidc: { providers, flow: oidcFlow },
    /** Resolves once every commit so far is on disk: an answer after a write awaits it (http/core.ts). */
    durable: commits ? commits.durable : async () => {},
    /** Periodic clean-up: finished rate-limit windows, and sessions a day past their end. */
    async housekeep(): Promise<void> {
      const t = now();
      await security.sweep(t);
      await sessions.purgeExpired(t - 86_400_000);
      await magicLinksRepo.purgeExpired(t - 86_400_000);
      await accountTokens.purgeExpired(t - 86_400_000);
      await oidcRepo.purgeExpired(t);
      await mail.purgeFinished(t - 30 * 86_400_000);
    },
    close: () => {
      commits?.close();
      // close(true) finalizes the prepared statements, so the connection really closes now: the
      // last to close checkpoints the WAL into the file and removes it.
      db.close(true);
    },
  };
}

export type Context = ReturnType<typeof createContext>;
