import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig, maskDatabaseUrl, settingsHelp } from "../src/config";
import { searchLogs } from "./security/ledger";

const PASSWORD = "db-Pass-4e1b9d77";

const failure = (env: Record<string, string>, flags: Record<string, string> = {}): ConfigError => {
  try {
    loadConfig(flags, env);
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error("expected a ConfigError");
};

describe("SUITE_DATABASE_URL / --database-url", () => {
  test("unset: SQLite (null); postgres:// and postgresql:// are taken as given; the flag wins", () => {
    expect(loadConfig({}, {}).databaseUrl).toBeNull();
    expect(loadConfig({}, { SUITE_DATABASE_URL: "" }).databaseUrl).toBeNull();
    const url = `postgres://suite:${PASSWORD}@db.internal:5432/suite?sslmode=require`;
    expect(loadConfig({}, { SUITE_DATABASE_URL: url }).databaseUrl).toBe(url);
    expect(loadConfig({}, { SUITE_DATABASE_URL: "postgresql://suite@10.0.0.5/suite" }).databaseUrl).toBe("postgresql://suite@10.0.0.5/suite");
    expect(loadConfig({ "database-url": "postgres://a@flag/x" }, { SUITE_DATABASE_URL: "postgres://a@env/x" }).databaseUrl).toBe("postgres://a@flag/x");
  });

  test("anything else is refused with one line naming the setting and the schemes, the password masked", () => {
    for (const [value, why] of [
      [`mysql://suite:${PASSWORD}@db/suite`, "must start with postgres:// or postgresql://"],
      [`db.internal:5432/suite`, "must start with postgres:// or postgresql://"],
      [`postgres://suite:${PASSWORD}@/suite`, "expected a PostgreSQL URL"],
      [`postgres://suite:${PASSWORD}@[bad/suite`, "expected a PostgreSQL URL"],
    ] as const) {
      const e = failure({ SUITE_DATABASE_URL: value });
      expect(e.message).toContain("invalid SUITE_DATABASE_URL");
      expect(e.message).toContain(why);
      expect(e.message).not.toContain(PASSWORD);
    }
    const flag = failure({}, { "database-url": `sqlite://${PASSWORD}` });
    expect(flag.message).toContain("invalid --database-url");
    expect(flag.message).not.toContain(PASSWORD);
  });

  test("maskDatabaseUrl hides the password and password-like query values, keeps the rest", () => {
    expect(maskDatabaseUrl(`postgres://suite:${PASSWORD}@db:5432/suite`)).toBe("postgres://suite:***@db:5432/suite");
    expect(maskDatabaseUrl("postgres://suite@db/suite")).toBe("postgres://suite@db/suite");
    expect(maskDatabaseUrl(`postgresql://u@h/d?sslmode=require&password=${PASSWORD}`)).toBe("postgresql://u@h/d?sslmode=require&password=***");
    expect(maskDatabaseUrl(`postgres://u:${encodeURIComponent("p@ss/word")}@h/d`)).toBe("postgres://u:***@h/d");
    expect(maskDatabaseUrl(`not a url ${PASSWORD}`)).not.toContain(PASSWORD);
  });

  test("the secrets ledger catches the password in a logged URL, and not in a masked one", () => {
    const secrets = new Map([[PASSWORD, "database password"]]);
    const url = `postgres://suite:${PASSWORD}@db.internal:5432/suite`;
    expect(searchLogs([JSON.stringify({ msg: "connecting", url })], secrets).hits).toEqual(["database password (db-P…)"]);
    expect(searchLogs([`error: connect ${url} refused`], secrets).hits.length).toBe(1);
    expect(searchLogs([JSON.stringify({ msg: "connecting", url: maskDatabaseUrl(url) })], secrets).hits).toEqual([]);
  });

  test("suite help names it with its default", () => {
    expect(settingsHelp()).toContain("--database-url, SUITE_DATABASE_URL (default: none: SQLite in --db)");
  });
});
