import { availableParallelism } from "node:os";

/** Every setting of the server, resolved from flags, then `SUITE_*` environment, then defaults. */
export interface Config {
  port: number;
  host: string;
  db: string;
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
}

/** A bad setting: main prints `message` as one line and exits non-zero. */
export class ConfigError extends Error {}

type Kind = "port" | "string" | "url" | "seconds" | "bool" | "secure" | "count" | "signup";
interface Setting {
  key: keyof Config;
  env: string;
  flag: string;
  kind: Kind;
  /** For `url` settings: the schemes accepted. */
  schemes?: string[];
}

const SETTINGS: Setting[] = [
  { key: "port", env: "SUITE_PORT", flag: "port", kind: "port" },
  { key: "host", env: "SUITE_HOST", flag: "host", kind: "string" },
  { key: "db", env: "SUITE_DB", flag: "db", kind: "string" },
  { key: "baseDomain", env: "SUITE_BASE_DOMAIN", flag: "base-domain", kind: "string" },
  { key: "cookieDomain", env: "SUITE_COOKIE_DOMAIN", flag: "cookie-domain", kind: "string" },
  { key: "cookieSecure", env: "SUITE_COOKIE_SECURE", flag: "cookie-secure", kind: "secure" },
  { key: "jwtSecret", env: "SUITE_JWT_SECRET", flag: "jwt-secret", kind: "string" },
  { key: "encryptionKey", env: "SUITE_ENCRYPTION_KEY", flag: "encryption-key", kind: "string" },
  { key: "smtpUrl", env: "SUITE_SMTP_URL", flag: "smtp-url", kind: "url", schemes: ["smtp:", "smtps:"] },
  { key: "mailFrom", env: "SUITE_MAIL_FROM", flag: "mail-from", kind: "string" },
  { key: "publicUrl", env: "SUITE_PUBLIC_URL", flag: "public-url", kind: "url", schemes: ["http:", "https:"] },
  { key: "trustProxy", env: "SUITE_TRUST_PROXY", flag: "trust-proxy", kind: "bool" },
  { key: "hashConcurrency", env: "SUITE_HASH_CONCURRENCY", flag: "hash-concurrency", kind: "count" },
  { key: "accessTtl", env: "SUITE_ACCESS_TTL", flag: "access-ttl", kind: "seconds" },
  { key: "refreshTtl", env: "SUITE_REFRESH_TTL", flag: "refresh-ttl", kind: "seconds" },
  { key: "tempTokenTtl", env: "SUITE_TEMP_TOKEN_TTL", flag: "temp-token-ttl", kind: "seconds" },
  { key: "magicLinkTtl", env: "SUITE_MAGIC_LINK_TTL", flag: "magic-link-ttl", kind: "seconds" },
  { key: "inviteTtl", env: "SUITE_INVITE_TTL", flag: "invite-ttl", kind: "seconds" },
  { key: "refreshGrace", env: "SUITE_REFRESH_GRACE", flag: "refresh-grace", kind: "seconds" },
  { key: "reauthWindow", env: "SUITE_REAUTH_WINDOW", flag: "reauth-window", kind: "seconds" },
  { key: "signup", env: "SUITE_SIGNUP", flag: "signup", kind: "signup" },
  { key: "oidcTestLoopback", env: "SUITE_OIDC_TEST_LOOPBACK", flag: "oidc-test-loopback", kind: "bool" },
  { key: "oidcTestGithubUrl", env: "SUITE_OIDC_TEST_GITHUB_URL", flag: "oidc-test-github-url", kind: "url", schemes: ["http:"] },
];

/** The flag names `loadConfig` understands, for the command line's own parser. */
export const CONFIG_FLAGS = new Set(SETTINGS.map((s) => s.flag));

function parseValue(s: Setting, raw: string, where: string): unknown {
  // A secret (the JWT key, SMTP credentials inside the URL) is never echoed back.
  const shown = s.key === "jwtSecret" || s.key === "encryptionKey" || s.key === "smtpUrl" ? "" : `=${JSON.stringify(raw)}`;
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
    default:
      if (value === "") throw bad("must not be empty");
      return value;
  }
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
  const secure = (raw.cookieSecure as string | undefined) ?? "auto";
  const port = (raw.port as number | undefined) ?? 8000;
  const cookieSecure = secure === "auto" ? !isDevHost(baseDomain) : secure === "true";

  const config: Config = {
    port,
    host: (raw.host as string | undefined) ?? "0.0.0.0",
    db: (raw.db as string | undefined) ?? "./data/suite.db",
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
    trustProxy: (raw.trustProxy as boolean | undefined) ?? false,
    // As many hashes as cores (CONTRACT §11); their threads run below the event loop's priority.
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
  };
  if (config.oidcTestLoopback && !isDevHost(baseDomain)) {
    throw new ConfigError(`invalid ${where.oidcTestLoopback}: a test-only setting, refused unless the base domain is a development host (localhost)`);
  }
  if (config.oidcTestGithubUrl !== null && (!config.oidcTestLoopback || !isDevHost(new URL(config.oidcTestGithubUrl).hostname))) {
    throw new ConfigError(`invalid ${where.oidcTestGithubUrl}: a test-only setting, needs ${where.oidcTestLoopback} and a loopback address`);
  }
  for (const key of ["accessTtl", "refreshTtl", "tempTokenTtl", "magicLinkTtl", "inviteTtl", "reauthWindow"] as const) {
    if (config[key] < 1) throw new ConfigError(`invalid ${where[key]}=0: a lifetime must be at least 1 second`);
  }
  if (config.accessTtl > config.refreshTtl) throw new ConfigError(`invalid ${where.accessTtl}: must not exceed ${where.refreshTtl}`);
  return config;
}

/** The settings table of the README, kept beside the code that reads them. */
export function settingsHelp(): string {
  return SETTINGS.map((s) => `  --${s.flag.padEnd(18)} ${s.env}`).join("\n");
}
