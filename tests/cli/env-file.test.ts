import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../../src/config";
import { applyEnvFile, parseEnvFile } from "../../src/cli/env-file";

/** The settings file every `suite` command reads (src/cli/env-file.ts), in-process. */

const dir = mkdtempSync(join(tmpdir(), "suite-env-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("parseEnvFile: systemd's EnvironmentFile lines", () => {
  test("KEY=VALUE, comments, blanks, quotes, escapes and continued lines", () => {
    const text = [
      "# a comment",
      "; another",
      "",
      "SUITE_PUBLIC_URL=https://suite.example.com",
      "  SUITE_BASE_DOMAIN = suite.example.com  ",
      'SUITE_MAIL_FROM="Workspace Suite <no-reply@suite.example.com>"',
      'QUOTED="a \\"b\\" c\\\\d"',
      "SINGLE='$HOME \\n stays'",
      "LONG=one \\",
      "two",
      "EMPTY=",
    ].join("\n");
    expect(parseEnvFile(text, "f")).toEqual({
      SUITE_PUBLIC_URL: "https://suite.example.com",
      SUITE_BASE_DOMAIN: "suite.example.com",
      SUITE_MAIL_FROM: "Workspace Suite <no-reply@suite.example.com>",
      QUOTED: 'a "b" c\\d',
      SINGLE: "$HOME \\n stays",
      LONG: "one two",
      EMPTY: "",
    });
  });

  test("a line that is not KEY=VALUE is an error naming the file and line", () => {
    expect(() => parseEnvFile("A=1\nnot a setting\n", "/etc/suite/suite.env")).toThrow(new ConfigError("/etc/suite/suite.env line 2: expected KEY=VALUE"));
    expect(() => parseEnvFile("=x", "f")).toThrow(ConfigError);
  });
});

describe("applyEnvFile", () => {
  const file = join(dir, "suite.env");
  writeFileSync(file, "SUITE_PUBLIC_URL=https://from-file.example\nSUITE_SMTP_URL=smtp://mail.internal:25\n");

  test("--env-file: the file fills what the environment leaves unset; the environment wins", () => {
    const env: Record<string, string | undefined> = { SUITE_PUBLIC_URL: "https://from-env.example" };
    expect(applyEnvFile(file, env, join(dir, "absent"))).toEqual({ file, warnings: [] });
    expect(env).toEqual({ SUITE_PUBLIC_URL: "https://from-env.example", SUITE_SMTP_URL: "smtp://mail.internal:25" });
    // An empty variable is unset, as for every setting: the file fills it.
    const empty: Record<string, string | undefined> = { SUITE_PUBLIC_URL: "" };
    applyEnvFile(file, empty);
    expect(empty.SUITE_PUBLIC_URL).toBe("https://from-file.example");
  });

  test("--env-file that cannot be read stops the command, naming it", () => {
    expect(() => applyEnvFile(join(dir, "nope.env"), {})).toThrow(new ConfigError(`cannot read --env-file ${join(dir, "nope.env")}: no such file`));
    expect(() => applyEnvFile("", {})).toThrow(ConfigError);
  });

  test("the default file: read when it exists; nothing and no warning when it does not", () => {
    const env: Record<string, string | undefined> = {};
    expect(applyEnvFile(undefined, env, file)).toEqual({ file, warnings: [] });
    expect(env.SUITE_PUBLIC_URL).toBe("https://from-file.example");
    const none: Record<string, string | undefined> = {};
    expect(applyEnvFile(undefined, none, join(dir, "absent"))).toEqual({ file: null, warnings: [] });
    expect(none).toEqual({});
  });

  test("the default file there but unreadable: a warning that says the command runs on its own settings, and how to fix it", () => {
    const folder = join(dir, "folder.env");
    mkdirSync(folder);
    const env: Record<string, string | undefined> = {};
    const r = applyEnvFile(undefined, env, folder);
    expect(r.file).toBeNull();
    expect(r.warnings).toEqual([
      `${folder} exists but it is a folder: this command runs with its own settings, not the server's; make the file readable by the server's group (chgrp suite, chmod 0640) or give --env-file`,
    ]);
    expect(env).toEqual({});
  });
});
