import { availableParallelism } from "node:os";
import { parseAllowList } from "./outbound/addresses";

/** Every setting of the server, resolved from flags, then `SUITE_*` environment, then defaults. */
export interface Config {
  port: number;
  host: string;
  db: string;
  /** postgres://… : the whole suite on PostgreSQL (15+); null: SQLite in `db`. May hold a password: never log it, show it masked (maskDatabaseUrl). */
  databaseUrl: string | null;
  baseDomain: string;
  /** null: host-only cookies (browsers refuse `Domain=localhost` and IP addresses). */
  cookieDomain: string | null;
  cookieSecure: boolean;
  jwtSecret: string | null;
  /** The key that encrypts TOTP secrets and keys backup-code hashes; null: the generated one in the key file (security/key-file.ts). */
  encryptionKey: string | null;
  smtpUrl: string | null;
  mailFrom: string;
  publicUrl: string;
  /** True when publicUrl is the default (no --public-url, no SUITE_PUBLIC_URL): links a command mails then point at it (src/cli/open.ts warns). */
  publicUrlIsDefault?: boolean;
  trustProxy: boolean;
  hashConcurrency: number;
  /** Lifetimes, in seconds. */
  accessTtl: number;
  refreshTtl: number;
  tempTokenTtl: number;
  magicLinkTtl: number;
  inviteTtl: number;
  refreshGrace: number;
  /** How recent a session's last password (or magic-link) proof must be to change the second factor. */
  reauthWindow: number;
  /** "closed": POST /auth/signup answers 403 signup_closed; organizations come from `suite tenant create` only. */
  signup: "open" | "closed";
  /**
   * TESTS ONLY: identity providers may have http issuers on a loopback address (127.0.0.1, ::1,
   * localhost). Refused unless the base domain is a development host, so a production
   * configuration cannot turn it on; everywhere else issuers must be https.
   */
  oidcTestLoopback: boolean;
  /** TESTS ONLY: where a GitHub stand-in answers (loopback, and only with oidcTestLoopback); null: github.com. */
  oidcTestGithubUrl: string | null;
  /**
   * SUITE_OUTBOUND_ALLOW: CIDRs and host names that outbound requests (identity providers) may
   * reach although they are loopback, private, link-local... (src/outbound). Empty: public only.
   */
  outboundAllow: string;
  /** SUITE_WEBHOOK_HTTP: webhooks may POST to plain http addresses (default: https only). */
  webhookHttp: boolean;
  /** SUITE_WEBHOOK_TIMEOUT: seconds a webhook delivery may take, answer included (default 10). */
  webhookTimeout: number;
  /** SUITE_OIDC_ENDPOINT_HOSTS: host names an OpenID provider's token, JWKS and userinfo endpoints may be on besides its issuer's host. */
  oidcEndpointHosts: string[];
  /** Scheduled backups (cli/backup-schedule.ts): the folder (null: none), hours between them, how many to keep. */
  backupDir: string | null;
  backupEvery: number;
  backupKeep: number;
  /** The bearer token Prometheus sends to GET /api/v1/metrics; null: no metrics endpoint (404). */
  metricsToken: string | null;
  /** MB of free disk kept for checkpoints and small writes: imports (and jobs) are refused with 507 below it (db/disk-room.ts). */
  diskReserveMb: number;
  /** SUITE_NEW_DEVICE_MAIL: a sign-in from a new device mails its account (auth/new-device); false turns it off for the whole server. */
  newDeviceMail: boolean;
  /** SUITE_EVENTS_RETENTION: seconds an organization's events are kept (GET /events, resuming a stream). */
  eventsRetention: number;
}

/** A bad setting: main prints `message` as one line and exits non-zero. */
export class ConfigError extends Error {}

type Kind = "port" | "string" | "url" | "database-url" | "seconds" | "bool" | "secure" | "count" | "signup" | "hours" | "megabytes";
interface Setting {
  key: keyof Config;
  env: string;
  flag: string;
  kind: Kind;
  /** For `url` settings: the schemes accepted. */
  schemes?: string[];
  /** What `suite help` and the README say: the value when unset, and one line of meaning. */
  default: string;
  help: string;
}

const SETTINGS: Setting[] = [
  { key: "port", env: "SUITE_PORT", flag: "port", kind: "port", default: "8000", help: "the HTTP port to listen on" },
  { key: "host", env: "SUITE_HOST", flag: "host", kind: "string", default: "0.0.0.0", help: "the address to listen on (127.0.0.1: this machine only)" },
  { key: "db", env: "SUITE_DB", flag: "db", kind: "string", default: "./data/suite.db", help: "the SQLite file; its folder also holds <db>.keys and the upgrade copies" },
  { key: "databaseUrl", env: "SUITE_DATABASE_URL", flag: "database-url", kind: "database-url", default: "none: SQLite in --db", help: "run on PostgreSQL 15+ instead, e.g. postgres://suite:PASSWORD@db.internal:5432/suite; any number of instances may share it" },
  { key: "baseDomain", env: "SUITE_BASE_DOMAIN", flag: "base-domain", kind: "string", default: "localhost", help: "organizations live at <subdomain>.<base domain>" },
  { key: "cookieDomain", env: "SUITE_COOKIE_DOMAIN", flag: "cookie-domain", kind: "string", default: "the base domain", help: "the cookies' Domain, so that subdomains share a sign-in (none on localhost)" },
  { key: "cookieSecure", env: "SUITE_COOKIE_SECURE", flag: "cookie-secure", kind: "secure", default: "auto", help: "Secure cookies: auto = yes unless the base domain is localhost" },
  { key: "jwtSecret", env: "SUITE_JWT_SECRET", flag: "jwt-secret", kind: "string", default: "generated, kept in <db>.keys", help: "the HS256 key for access tokens, at least 32 characters" },
  { key: "encryptionKey", env: "SUITE_ENCRYPTION_KEY", flag: "encryption-key", kind: "string", default: "generated, kept in <db>.keys", help: "encrypts TOTP secrets, at least 32 characters; never change it once users have 2FA" },
  { key: "smtpUrl", env: "SUITE_SMTP_URL", flag: "smtp-url", kind: "url", schemes: ["smtp:", "smtps:"], default: "none: mail waits in the outbox", help: "mail delivery, e.g. smtp://127.0.0.1:2525 or smtps://user:pass@host:465" },
  { key: "mailFrom", env: "SUITE_MAIL_FROM", flag: "mail-from", kind: "string", default: "Workspace Suite <no-reply@<base domain>>", help: "the sender of every mail" },
  { key: "publicUrl", env: "SUITE_PUBLIC_URL", flag: "public-url", kind: "url", schemes: ["http:", "https:"], default: "http://<base domain>:<port>", help: "the address users reach (https://\u2026 behind a proxy): links in mail, the first-run hints" },
  { key: "trustProxy", env: "SUITE_TRUST_PROXY", flag: "trust-proxy", kind: "bool", default: "false", help: "take the client address from X-Forwarded-For (only behind a reverse proxy)" },
  { key: "hashConcurrency", env: "SUITE_HASH_CONCURRENCY", flag: "hash-concurrency", kind: "count", default: "the number of cores", help: "password hashes computed at once, on threads below the requests' priority" },
  { key: "accessTtl", env: "SUITE_ACCESS_TTL", flag: "access-ttl", kind: "seconds", default: "900", help: "access token lifetime, seconds" },
  { key: "refreshTtl", env: "SUITE_REFRESH_TTL", flag: "refresh-ttl", kind: "seconds", default: "2592000", help: "session (refresh token) lifetime, seconds, from sign-in" },
  { key: "tempTokenTtl", env: "SUITE_TEMP_TOKEN_TTL", flag: "temp-token-ttl", kind: "seconds", default: "300", help: "2FA challenge lifetime, seconds" },
  { key: "magicLinkTtl", env: "SUITE_MAGIC_LINK_TTL", flag: "magic-link-ttl", kind: "seconds", default: "600", help: "magic link lifetime, seconds" },
  { key: "inviteTtl", env: "SUITE_INVITE_TTL", flag: "invite-ttl", kind: "seconds", default: "604800", help: "invitation lifetime, seconds" },
  { key: "refreshGrace", env: "SUITE_REFRESH_GRACE", flag: "refresh-grace", kind: "seconds", default: "10", help: "seconds in which two tabs may refresh with the same token" },
  { key: "reauthWindow", env: "SUITE_REAUTH_WINDOW", flag: "reauth-window", kind: "seconds", default: "600", help: "seconds a password (or magic-link) proof counts as recent for 2FA, identity, member and organization changes" },
  { key: "signup", env: "SUITE_SIGNUP", flag: "signup", kind: "signup", default: "open", help: "closed: no public signup; organizations come from suite tenant create" },
  { key: "oidcTestLoopback", env: "SUITE_OIDC_TEST_LOOPBACK", flag: "oidc-test-loopback", kind: "bool", default: "false", help: "TESTS ONLY: allow http identity-provider issuers on loopback (refused unless the base domain is localhost)" },
  { key: "oidcTestGithubUrl", env: "SUITE_OIDC_TEST_GITHUB_URL", flag: "oidc-test-github-url", kind: "url", schemes: ["http:"], default: "none: github.com", help: "TESTS ONLY: where a GitHub stand-in answers (loopback, with --oidc-test-loopback)" },
  { key: "outboundAllow", env: "SUITE_OUTBOUND_ALLOW", flag: "outbound-allow", kind: "string", default: "none: public addresses only", help: "CIDRs and host names outbound requests (identity providers) may reach although private, loopback or link-local, e.g. 10.20.0.0/16,idp.corp.example" },
  { key: "webhookHttp", env: "SUITE_WEBHOOK_HTTP", flag: "webhook-http", kind: "bool", default: "false", help: "webhooks may POST to plain http addresses (otherwise https only), e.g. a receiver on the same private network" },
  { key: "webhookTimeout", env: "SUITE_WEBHOOK_TIMEOUT", flag: "webhook-timeout", kind: "seconds", default: "10", help: "seconds a webhook delivery may take, the receiver's answer included; slower counts as a failure and is retried" },
  { key: "oidcEndpointHosts", env: "SUITE_OIDC_ENDPOINT_HOSTS", flag: "oidc-endpoint-hosts", kind: "string", default: "none: the issuer's host only", help: "host names an OpenID provider's token, JWKS and userinfo endpoints may be on besides its issuer's host, comma-separated" },
  { key: "backupDir", env: "SUITE_BACKUP_DIR", flag: "backup-dir", kind: "string", default: "none: no scheduled backups", help: "folder for scheduled backups while serving (made 0700; each backup 0600, integrity-checked)" },
  { key: "backupEvery", env: "SUITE_BACKUP_EVERY", flag: "backup-every", kind: "hours", default: "24", help: "hours between scheduled backups; fractions allowed (0.5)" },
  { key: "metricsToken", env: "SUITE_METRICS_TOKEN", flag: "metrics-token", kind: "string", default: "none: no metrics endpoint", help: "the bearer token that reads GET /api/v1/metrics (Prometheus text format), at least 32 characters; the operator's, not an organization's" },
  { key: "backupKeep", env: "SUITE_BACKUP_KEEP", flag: "backup-keep", kind: "count", default: "7", help: "how many scheduled backups to keep; older ones the suite named are removed" },
  { key: "newDeviceMail", env: "SUITE_NEW_DEVICE_MAIL", flag: "new-device-mail", kind: "bool", default: "true", help: "mail an account when it is signed in from a device or browser not seen before, with a \"this wasn't me\" link; false turns it off for every account" },
  { key: "eventsRetention", env: "SUITE_EVENTS_RETENTION", flag: "events-retention", kind: "seconds", default: "2592000", help: "seconds an organization's event log is kept (the event list, resuming a live stream); older events are swept" },
  { key: "diskReserveMb", env: "SUITE_DISK_RESERVE_MB", flag: "disk-reserve-mb", kind: "megabytes", default: "64", help: "MB of free disk kept beside the SQLite database for checkpoints and small writes such as sign-ins; imports are refused (507 storage_full) below it" },
];

/** The flag names `loadConfig` understands, for the command line's own parser. */
export const CONFIG_FLAGS = new Set(SETTINGS.map((s) => s.flag));

function parseValue(s: Setting, raw: string, where: string): unknown {
  // A secret (the JWT key, SMTP credentials inside the URL) is never echoed back; a database URL only with its password masked.
  const secret = s.key === "jwtSecret" || s.key === "encryptionKey" || s.key === "smtpUrl" || s.key === "metricsToken";
  const shown = secret || (s.key === "databaseUrl" && !showableDatabaseUrl(raw)) ? "" : `=${JSON.stringify(s.key === "databaseUrl" ? maskDatabaseUrl(raw) : raw)}`;
  const bad = (why: string) => new ConfigError(`invalid ${where}${shown}: ${why}`);
  const value = raw.trim();
  switch (s.kind) {
    case "port": {
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 65535) throw bad("expected a port number from 1 to 65535");
      return Number(value);
    }
    case "seconds": {
      if (!/^\d+$/.test(value) || Number(value) > 10 * 365 * 86400) throw bad("expected a whole number of seconds");
      return Number(value);
    }
    case "count": {
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 256) throw bad("expected a whole number from 1 to 256");
      return Number(value);
    }
    case "megabytes": {
      if (!/^\d+$/.test(value) || Number(value) > 1_048_576) throw bad("expected a whole number of megabytes from 0 to 1048576");
      return Number(value);
    }
    case "hours": {
      // Fractions too: half an hour is 0.5 (and a test's period a few seconds); at most a year.
      if (!/^\d+(\.\d+)?$/.test(value) || Number(value) <= 0 || Number(value) > 8760) throw bad("expected a number of hours above 0, such as 24 or 0.5");
      return Number(value);
    }
    case "bool": {
      const v = value.toLowerCase();
      if (["1", "true", "yes", "on"].includes(v)) return true;
      if (["0", "false", "no", "off"].includes(v)) return false;
      throw bad("expected true or false");
    }
    case "secure": {
      const v = value.toLowerCase();
      if (v === "auto" || v === "true" || v === "false") return v;
      throw bad("expected auto, true or false");
    }
    case "signup": {
      const v = value.toLowerCase();
      if (v === "open" || v === "closed") return v;
      throw bad("expected open or closed");
    }
    case "url": {
      if (value === "") return null;
      const expected = `expected a URL such as ${s.schemes?.[0] ?? "https:"}//host:port`;
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        throw bad(expected);
      }
      // "localhost:8000" parses as a URL of scheme "localhost:"; it is not what was meant.
      if (s.schemes && !s.schemes.includes(url.protocol)) throw bad(expected);
      if (!url.hostname) throw bad(expected);
      return value.replace(/\/+$/, "");
    }
    case "database-url": {
      if (value === "") return null;
      const expected = "expected a PostgreSQL URL such as postgres://user:password@host:5432/database";
      if (!/^postgres(ql)?:\/\//i.test(value)) throw bad(`${expected} (it must start with postgres:// or postgresql://)`);
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        throw bad(expected);
      }
      if (!url.hostname) throw bad(`${expected} (no host)`);
      return value;
    }
    default:
      if (value === "") throw bad("must not be empty");
      return value;
  }
}

/** Whether a mistaken database URL can be shown masked: a URL with its user part where a URL has it (else a password may sit anywhere). */
function showableDatabaseUrl(raw: string): boolean {
  try {
    const url = new URL(raw.trim());
    return /^postgres(ql)?:$/i.test(url.protocol) || url.password !== "";
  } catch {
    return false;
  }
}

/**
 * A database URL fit to print: the password (and anything that looks like one in the query, such
 * as ?password=…) replaced by ***. Text that does not parse as a URL is shown as the scheme alone.
 */
export function maskDatabaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    const scheme = /^([a-z][a-z0-9+.-]*:)/i.exec(raw.trim());
    return scheme ? `${scheme[1]}//***` : "***";
  }
  if (url.password) url.password = "***";
  for (const key of [...url.searchParams.keys()]) if (/pass|secret|key|token/i.test(key)) url.searchParams.set(key, "***");
  return url.toString().replace(/%2A%2A%2A/g, "***");
}

/** A development host: plain http is fine there, and cookies cannot carry its name as Domain. */
export function isDevHost(host: string): boolean {
  const h = host.toLowerCase();
  return h === "localhost" || h.endsWith(".localhost") || /^127\.\d+\.\d+\.\d+$/.test(h) || h === "::1" || h === "[::1]";
}

const isIpAddress = (host: string): boolean => /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.includes(":");

const DOMAIN_RE = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * Resolves the configuration. `flags` are `--name value` pairs already split by the command line.
 * Throws ConfigError with one human line on the first bad value.
 */
export function loadConfig(flags: Record<string, string> = {}, env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {};
  /** Where each given value came from (`--flag` or `SUITE_*`), for the error line. */
  const where: Record<string, string> = {};
  for (const s of SETTINGS) {
    where[s.key] = s.env;
    if (flags[s.flag] !== undefined) raw[s.key] = parseValue(s, flags[s.flag]!, (where[s.key] = `--${s.flag}`));
    else if (env[s.env] !== undefined && env[s.env] !== "") raw[s.key] = parseValue(s, env[s.env]!, s.env);
  }
  const baseDomain = String(raw.baseDomain ?? "localhost").toLowerCase();
  if (!DOMAIN_RE.test(baseDomain)) throw new ConfigError(`invalid ${where.baseDomain}=${JSON.stringify(baseDomain)}: expected a domain name such as example.com`);
  const cookieDomainRaw = raw.cookieDomain === undefined ? baseDomain : String(raw.cookieDomain).toLowerCase().replace(/^\./, "");
  if (!DOMAIN_RE.test(cookieDomainRaw)) throw new ConfigError(`invalid ${where.cookieDomain}=${JSON.stringify(cookieDomainRaw)}: expected a domain name`);
  if (baseDomain !== cookieDomainRaw && !baseDomain.endsWith(`.${cookieDomainRaw}`)) {
    throw new ConfigError(`invalid ${where.cookieDomain}=${JSON.stringify(cookieDomainRaw)}: must be ${baseDomain} or a parent of it`);
  }
  // Browsers refuse a cookie for a whole top-level domain ("Domain=com"): nobody could sign in.
  if (cookieDomainRaw !== baseDomain && !cookieDomainRaw.includes(".")) {
    throw new ConfigError(`invalid ${where.cookieDomain}=${JSON.stringify(cookieDomainRaw)}: a top-level domain cannot carry cookies`);
  }
  const jwtSecret = (raw.jwtSecret as string | undefined) ?? null;
  if (jwtSecret !== null && jwtSecret.length < 32) throw new ConfigError(`invalid ${where.jwtSecret}: must be at least 32 characters`);
  const encryptionKey = (raw.encryptionKey as string | undefined) ?? null;
  if (encryptionKey !== null && encryptionKey.length < 32) throw new ConfigError(`invalid ${where.encryptionKey}: must be at least 32 characters`);
  const metricsToken = (raw.metricsToken as string | undefined)?.trim() ?? null;
  if (metricsToken !== null && metricsToken.length < 32) throw new ConfigError(`invalid ${where.metricsToken}: must be at least 32 characters`);
  const secure = (raw.cookieSecure as string | undefined) ?? "auto";
  const port = (raw.port as number | undefined) ?? 8000;
  const cookieSecure = secure === "auto" ? !isDevHost(baseDomain) : secure === "true";

  const config: Config = {
    port,
    host: (raw.host as string | undefined) ?? "0.0.0.0",
    db: (raw.db as string | undefined) ?? "./data/suite.db",
    databaseUrl: (raw.databaseUrl as string | null | undefined) ?? null,
    baseDomain,
    // Browsers refuse Domain= for localhost and for IP addresses: host-only cookies there.
    cookieDomain: isDevHost(cookieDomainRaw) || isIpAddress(cookieDomainRaw) ? null : cookieDomainRaw,
    cookieSecure,
    jwtSecret,
    encryptionKey,
    smtpUrl: (raw.smtpUrl as string | null | undefined) ?? null,
    mailFrom: (raw.mailFrom as string | undefined) ?? `Workspace Suite <no-reply@${baseDomain}>`,
    // Secure cookies mean the site is served over https (behind a proxy, on the standard port).
    publicUrl: (raw.publicUrl as string | null | undefined) ?? (cookieSecure ? `https://${baseDomain}` : `http://${baseDomain}:${port}`),
    publicUrlIsDefault: raw.publicUrl == null,
    trustProxy: (raw.trustProxy as boolean | undefined) ?? false,
    // As many hashes as cores (docs/interface.md#limits); their threads run below the event loop's priority.
    hashConcurrency: (raw.hashConcurrency as number | undefined) ?? availableParallelism(),
    accessTtl: (raw.accessTtl as number | undefined) ?? 15 * 60,
    refreshTtl: (raw.refreshTtl as number | undefined) ?? 30 * 86400,
    tempTokenTtl: (raw.tempTokenTtl as number | undefined) ?? 5 * 60,
    magicLinkTtl: (raw.magicLinkTtl as number | undefined) ?? 10 * 60,
    inviteTtl: (raw.inviteTtl as number | undefined) ?? 7 * 86400,
    refreshGrace: (raw.refreshGrace as number | undefined) ?? 10,
    reauthWindow: (raw.reauthWindow as number | undefined) ?? 600,
    signup: (raw.signup as "open" | "closed" | undefined) ?? "open",
    oidcTestLoopback: (raw.oidcTestLoopback as boolean | undefined) ?? false,
    oidcTestGithubUrl: (raw.oidcTestGithubUrl as string | null | undefined) ?? null,
    outboundAllow: (raw.outboundAllow as string | undefined) ?? "",
    webhookHttp: (raw.webhookHttp as boolean | undefined) ?? false,
    webhookTimeout: (raw.webhookTimeout as number | undefined) ?? 10,
    oidcEndpointHosts: String(raw.oidcEndpointHosts ?? "")
      .split(",")
      .map((h) => h.trim().toLowerCase().replace(/\.$/, ""))
      .filter((h) => h !== ""),
    backupDir: (raw.backupDir as string | undefined) ?? null,
    backupEvery: (raw.backupEvery as number | undefined) ?? 24,
    backupKeep: (raw.backupKeep as number | undefined) ?? 7,
    metricsToken,
    diskReserveMb: (raw.diskReserveMb as number | undefined) ?? 64,
    eventsRetention: (raw.eventsRetention as number | undefined) ?? 30 * 86400,
    newDeviceMail: (raw.newDeviceMail as boolean | undefined) ?? true,
  };
  if (config.oidcTestLoopback && !isDevHost(baseDomain)) {
    throw new ConfigError(`invalid ${where.oidcTestLoopback}: a test-only setting, refused unless the base domain is a development host (localhost)`);
  }
  if (config.oidcTestGithubUrl !== null && (!config.oidcTestLoopback || !isDevHost(new URL(config.oidcTestGithubUrl).hostname))) {
    throw new ConfigError(`invalid ${where.oidcTestGithubUrl}: a test-only setting, needs ${where.oidcTestLoopback} and a loopback address`);
  }
  try {
    parseAllowList(config.outboundAllow);
  } catch (e) {
    throw new ConfigError(`invalid ${where.outboundAllow}: ${(e as Error).message}`);
  }
  const badHost = config.oidcEndpointHosts.find((h) => !DOMAIN_RE.test(h));
  if (badHost !== undefined) throw new ConfigError(`invalid ${where.oidcEndpointHosts}: ${JSON.stringify(badHost)} is not a host name`);
  for (const key of ["accessTtl", "refreshTtl", "tempTokenTtl", "magicLinkTtl", "inviteTtl", "reauthWindow"] as const) {
    if (config[key] < 1) throw new ConfigError(`invalid ${where[key]}=0: a lifetime must be at least 1 second`);
  }
  if (config.accessTtl > config.refreshTtl) throw new ConfigError(`invalid ${where.accessTtl}: must not exceed ${where.refreshTtl}`);
  return config;
}

/** `suite help`'s settings: each flag and variable, its default, and one line of meaning. */
export function settingsHelp(): string {
  return SETTINGS.map((s) => `  --${s.flag}, ${s.env} (default: ${s.default})\n      ${s.help}`).join("\n");
}

/** The variables the settings read. */
export const SETTING_VARIABLES: readonly string[] = SETTINGS.map((s) => s.env);

/** Settings whose values are secrets: shown nowhere, only whether they are set. */
const SECRET_SETTINGS = new Set<keyof Config>(["jwtSecret", "encryptionKey", "smtpUrl", "metricsToken"]);

/**
 * Every setting in effect as the operator's console shows it, by variable name: a secret's value
 * never (only "set" or "not set"), a database URL with its password masked.
 */
export function settingsInEffect(config: Config): Array<{ name: string; value: string; secret: boolean }> {
  return SETTINGS.map((s) => {
    const v = config[s.key];
    const secret = SECRET_SETTINGS.has(s.key);
    const value = secret
      ? v ? "set" : "not set"
      : v === null || v === undefined ? "not set" : s.key === "databaseUrl" ? maskDatabaseUrl(String(v)) : Array.isArray(v) ? v.join(",") : String(v);
    return { name: s.env, value, secret };
  });
}

/**
 * `SUITE_*` variables that are no setting and no command's, yet expected in an environment: the
 * test suite's and the benches' knobs. They are not warned about (a developer exports them once).
 */
export const DEVELOPMENT_VARIABLES: readonly string[] = [
  "SUITE_FUZZ_SEED",
  "SUITE_FUZZ_RUNS",
  "SUITE_FUZZ_VERBOSE",
  "SUITE_HTTP_FUZZ_SEED",
  "SUITE_HTTP_FUZZ_CONNECTIONS",
  // npm test's PostgreSQL run (scripts/test.ts).
  "SUITE_TEST_DATABASE_URL",
  "SUITE_TEST_BACKEND",
  "SUITE_TEST_SKIP_POSTGRES",
];

/** Edits from `a` to `b`, a swap of two neighbours counting as one ("PROT" for "PORT"). */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * One warning line for each `SUITE_*` variable nobody reads (a typo is otherwise silently
 * ignored), naming the closest known one when it is near. Values are never shown: one may be a
 * secret.
 */
export function unknownVariableWarnings(env: Record<string, string | undefined>, known: Iterable<string>): string[] {
  const names = new Set([...SETTING_VARIABLES, ...DEVELOPMENT_VARIABLES, ...known]);
  const warnings: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith("SUITE_") || names.has(name)) continue;
    let best: string | null = null;
    let bestDistance = Number.POSITIVE_INFINITY;
    for (const candidate of names) {
      // A name cut short or run on ("SMTP" for "SMTP_URL", "PORT_NUMBER" for "PORT") is as near as one slip.
      const d = candidate.startsWith(`${name}_`) || name.startsWith(`${candidate}_`) ? 1 : distance(name.slice(6), candidate.slice(6));
      if (d < bestDistance) [best, bestDistance] = [candidate, d];
    }
    // Near enough to be a slip of the keyboard: two edits, or a third of the name for long ones.
    const near = best !== null && bestDistance <= Math.max(2, Math.floor((name.length - 6) / 3));
    warnings.push(`unknown variable ${name} is ignored${near ? `; did you mean ${best}?` : ""}`);
  }
  return warnings;
}
