import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../src/config";

/** Loads with only the given environment (never the test runner's own). */
const load = (env: Record<string, string> = {}, flags: Record<string, string> = {}) => loadConfig(flags, env);

/** The ConfigError a setting raises: one line, naming the setting. */
function configError(env: Record<string, string>, flags: Record<string, string> = {}): ConfigError {
  let caught: unknown;
  try {
    load(env, flags);
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  const message = (caught as ConfigError).message;
  expect(message).not.toContain("\n");
  expect(message.length).toBeGreaterThan(10);
  return caught as ConfigError;
}

describe("defaults", () => {
  test("with nothing set", () => {
    const c = load();
    expect(c.port).toBe(8000);
    expect(c.host).toBe("0.0.0.0");
    expect(c.db).toBe("./data/suite.db");
    expect(c.baseDomain).toBe("localhost");
    expect(c.cookieDomain).toBeNull();
    expect(c.cookieSecure).toBe(false);
    expect(c.jwtSecret).toBeNull();
    expect(c.smtpUrl).toBeNull();
    expect(c.trustProxy).toBe(false);
    expect(c.hashConcurrency).toBeGreaterThanOrEqual(1);
    expect(c.accessTtl).toBe(900);
    expect(c.refreshTtl).toBe(2592000);
    expect(c.tempTokenTtl).toBe(300);
    expect(c.magicLinkTtl).toBe(600);
    expect(c.inviteTtl).toBe(604800);
    expect(c.refreshGrace).toBe(10);
    expect(c.publicUrl).toBe("http://localhost:8000");
  });

  test("a real domain: cookies for it and its subdomains, Secure under auto", () => {
    const c = load({ SUITE_BASE_DOMAIN: "example.com" });
    expect(c.baseDomain).toBe("example.com");
    expect(c.cookieDomain).toBe("example.com");
    expect(c.cookieSecure).toBe(true);
    expect(c.mailFrom).toContain("example.com");
    expect(c.publicUrl).toBe("https://example.com");
    expect(load({ SUITE_BASE_DOMAIN: "example.com", SUITE_COOKIE_SECURE: "auto" }).cookieSecure).toBe(true);
  });

  test("development hosts: no Domain attribute, not Secure under auto", () => {
    for (const host of ["localhost", "app.localhost", "127.0.0.1"]) {
      const c = load({ SUITE_BASE_DOMAIN: host });
      expect(c.cookieDomain).toBeNull();
      expect(c.cookieSecure).toBe(false);
    }
    // An IP address cannot carry a cookie Domain either.
    expect(load({ SUITE_BASE_DOMAIN: "10.0.0.5" }).cookieDomain).toBeNull();
  });

  test("SUITE_COOKIE_SECURE true and false override auto", () => {
    expect(load({ SUITE_COOKIE_SECURE: "true" }).cookieSecure).toBe(true);
    expect(load({ SUITE_BASE_DOMAIN: "example.com", SUITE_COOKIE_SECURE: "false" }).cookieSecure).toBe(false);
    expect(load({ SUITE_COOKIE_SECURE: "TRUE" }).cookieSecure).toBe(true);
  });

  test("a parent domain may carry the cookies; a leading dot is dropped", () => {
    expect(load({ SUITE_BASE_DOMAIN: "suite.example.com", SUITE_COOKIE_DOMAIN: "example.com" }).cookieDomain).toBe("example.com");
    expect(load({ SUITE_BASE_DOMAIN: "example.com", SUITE_COOKIE_DOMAIN: ".Example.com" }).cookieDomain).toBe("example.com");
  });

  test("values from the environment", () => {
    const c = load({
      SUITE_PORT: "9001",
      SUITE_HOST: "127.0.0.1",
      SUITE_DB: "/tmp/x.db",
      SUITE_JWT_SECRET: "x".repeat(32),
      SUITE_SMTP_URL: "smtp://127.0.0.1:2525",
      SUITE_PUBLIC_URL: "https://suite.example.com/",
      SUITE_ACCESS_TTL: "60",
      SUITE_REFRESH_TTL: "3600",
      SUITE_TEMP_TOKEN_TTL: "30",
      SUITE_MAGIC_LINK_TTL: "120",
      SUITE_INVITE_TTL: "86400",
      SUITE_REFRESH_GRACE: "0",
    });
    expect(c).toMatchObject({ port: 9001, host: "127.0.0.1", db: "/tmp/x.db", jwtSecret: "x".repeat(32), smtpUrl: "smtp://127.0.0.1:2525" });
    expect(c.publicUrl).toBe("https://suite.example.com");
    expect([c.accessTtl, c.refreshTtl, c.tempTokenTtl, c.magicLinkTtl, c.inviteTtl, c.refreshGrace]).toEqual([60, 3600, 30, 120, 86400, 0]);
  });

  test("an empty environment variable counts as unset", () => {
    expect(load({ SUITE_PORT: "", SUITE_DB: "" })).toMatchObject({ port: 8000, db: "./data/suite.db" });
  });
});

describe("flags win over the environment", () => {
  test("each flag beats its variable", () => {
    const c = load(
      { SUITE_PORT: "9001", SUITE_HOST: "127.0.0.1", SUITE_DB: "/tmp/env.db", SUITE_ACCESS_TTL: "60", SUITE_BASE_DOMAIN: "example.com" },
      { port: "9002", host: "::", db: "/tmp/flag.db", "access-ttl": "120", "base-domain": "example.org" },
    );
    expect(c).toMatchObject({ port: 9002, host: "::", db: "/tmp/flag.db", accessTtl: 120, baseDomain: "example.org", cookieDomain: "example.org" });
  });

  test("a good flag rescues a bad variable, and a bad flag is named as a flag", () => {
    expect(load({ SUITE_PORT: "abc" }, { port: "8080" }).port).toBe(8080);
    const e = configError({ SUITE_PORT: "8080" }, { port: "abc" });
    expect(e.message).toContain("--port");
  });
});

describe("bad values stop the start with one line naming the setting", () => {
  const cases: Array<[string, Record<string, string>, string]> = [
    ["port 0", { SUITE_PORT: "0" }, "SUITE_PORT"],
    ["port 70000", { SUITE_PORT: "70000" }, "SUITE_PORT"],
    ["port abc", { SUITE_PORT: "abc" }, "SUITE_PORT"],
    ["port -1", { SUITE_PORT: "-1" }, "SUITE_PORT"],
    ["port 80.5", { SUITE_PORT: "80.5" }, "SUITE_PORT"],
    ["cookie secure maybe", { SUITE_COOKIE_SECURE: "maybe" }, "SUITE_COOKIE_SECURE"],
    ["jwt secret of 31 characters", { SUITE_JWT_SECRET: "x".repeat(31) }, "SUITE_JWT_SECRET"],
    ["negative access ttl", { SUITE_ACCESS_TTL: "-5" }, "SUITE_ACCESS_TTL"],
    ["non-numeric refresh ttl", { SUITE_REFRESH_TTL: "thirty days" }, "SUITE_REFRESH_TTL"],
    ["fractional temp token ttl", { SUITE_TEMP_TOKEN_TTL: "1.5" }, "SUITE_TEMP_TOKEN_TTL"],
    ["zero magic link ttl", { SUITE_MAGIC_LINK_TTL: "0" }, "SUITE_MAGIC_LINK_TTL"],
    ["negative invite ttl", { SUITE_INVITE_TTL: "-1" }, "SUITE_INVITE_TTL"],
    ["non-numeric refresh grace", { SUITE_REFRESH_GRACE: "ten" }, "SUITE_REFRESH_GRACE"],
    ["access ttl beyond refresh ttl", { SUITE_ACCESS_TTL: "7200", SUITE_REFRESH_TTL: "3600" }, "SUITE_ACCESS_TTL"],
    ["public url that is no url", { SUITE_PUBLIC_URL: "not a url" }, "SUITE_PUBLIC_URL"],
    ["public url without a scheme", { SUITE_PUBLIC_URL: "localhost:8000" }, "SUITE_PUBLIC_URL"],
    ["public url of another scheme", { SUITE_PUBLIC_URL: "javascript:alert(1)" }, "SUITE_PUBLIC_URL"],
    ["smtp url that is no url", { SUITE_SMTP_URL: "127.0.0.1:25" }, "SUITE_SMTP_URL"],
    ["base domain with a port", { SUITE_BASE_DOMAIN: "localhost:8000" }, "SUITE_BASE_DOMAIN"],
    ["base domain with a scheme", { SUITE_BASE_DOMAIN: "https://example.com" }, "SUITE_BASE_DOMAIN"],
    ["base domain with a bad label", { SUITE_BASE_DOMAIN: "-bad.example.com" }, "SUITE_BASE_DOMAIN"],
    ["base domain with an underscore", { SUITE_BASE_DOMAIN: "my_site.com" }, "SUITE_BASE_DOMAIN"],
    ["cookie domain of another site", { SUITE_BASE_DOMAIN: "example.com", SUITE_COOKIE_DOMAIN: "other.com" }, "SUITE_COOKIE_DOMAIN"],
    ["cookie domain that only ends alike", { SUITE_BASE_DOMAIN: "example.com", SUITE_COOKIE_DOMAIN: "ample.com" }, "SUITE_COOKIE_DOMAIN"],
    ["cookie domain below the base domain", { SUITE_BASE_DOMAIN: "example.com", SUITE_COOKIE_DOMAIN: "acme.example.com" }, "SUITE_COOKIE_DOMAIN"],
    ["cookie domain of a top-level domain", { SUITE_BASE_DOMAIN: "example.com", SUITE_COOKIE_DOMAIN: "com" }, "SUITE_COOKIE_DOMAIN"],
    ["trust proxy perhaps", { SUITE_TRUST_PROXY: "perhaps" }, "SUITE_TRUST_PROXY"],
    ["hash concurrency 0", { SUITE_HASH_CONCURRENCY: "0" }, "SUITE_HASH_CONCURRENCY"],
    ["blank host", { SUITE_HOST: "   " }, "SUITE_HOST"],
  ];
  for (const [name, env, setting] of cases) {
    test(name, () => {
      expect(configError(env).message).toContain(setting);
    });
  }

  test("the message says what was expected", () => {
    expect(configError({ SUITE_PORT: "70000" }).message).toMatch(/1 to 65535/);
    expect(configError({ SUITE_COOKIE_SECURE: "maybe" }).message).toMatch(/auto, true or false/);
    expect(configError({ SUITE_JWT_SECRET: "short" }).message).toMatch(/at least 32 characters/);
  });

  test("a secret is never repeated in the message", () => {
    const secret = "s3cr3t-but-too-short";
    expect(configError({ SUITE_JWT_SECRET: secret }).message).not.toContain(secret);
    const smtp = "smtp://mailer:hunter2@[bad";
    const e = configError({ SUITE_SMTP_URL: smtp });
    expect(e.message).toContain("SUITE_SMTP_URL");
    expect(e.message).not.toContain("hunter2");
  });

  test("a zero lifetime given as a flag names the flag", () => {
    expect(configError({}, { "access-ttl": "0" }).message).toContain("--access-ttl");
  });
});
