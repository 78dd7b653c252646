import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json";
import { SETTING_VARIABLES } from "../../src/config";
import { startServer } from "../server";
import { BINARY, ensureBinary } from "../web/e2e/support";
import { BUN, MAIN, lines, oneLineFailure, runSuite } from "./kit";

/** Issue 18, item 2: --version, help, unknown variables and the CLI's error lines. */

const dir = mkdtempSync(join(tmpdir(), "suite-operator-"));
afterAll(() => {
  chmodSync(dir, 0o700);
  rmSync(dir, { recursive: true, force: true });
});
const run = (args: string[], env: Record<string, string> = {}) => runSuite(args, { cwd: dir, env });
const ROOT = join(import.meta.dir, "..", "..");

describe("version", () => {
  test("--version, -V and version print `suite <package.json's version>` and exit 0, whatever the settings", async () => {
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+/);
    for (const args of [["--version"], ["-V"], ["version"], ["migrate", "--version"]]) {
      const r = await run(args, { SUITE_PORT: "not a port" });
      expect(r).toEqual({ code: 0, stdout: `suite ${pkg.version}\n`, stderr: "" });
    }
  }, 60_000);

  test("the built binary carries the version: it answers from a folder with no package.json", () => {
    ensureBinary();
    const p = Bun.spawnSync([BINARY, "--version"], { cwd: dir, env: { PATH: "/usr/bin:/bin" } });
    expect({ code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() }).toEqual({ code: 0, stdout: `suite ${pkg.version}\n`, stderr: "" });
  }, 180_000);
});

describe("help", () => {
  test("lists every command with its usage and meaning, and every setting with its default and meaning", async () => {
    const r = await run(["help"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    const text = r.stdout.split("\n");
    for (const [usage, meaning] of [
      ["suite serve", "the default command"],
      ["suite migrate", "upgrade the database"],
      ["suite tenant create --name N --subdomain S --admin-email E [--admin-name NAME]", "first admin"],
      ["suite mail list [--limit N]", "outbox"],
      ["suite seed --tenant S [--deals N]", "demo CRM data"],
      ["suite backup FILE", "copy of the live database"],
      ["suite version", "version"],
      ["suite help [COMMAND]", "this text"],
    ] as const) {
      const at = text.findIndex((l) => l.trim().startsWith(usage));
      expect(at).toBeGreaterThan(-1);
      expect(text[at + 1]).toContain(meaning);
    }
    expect(r.stdout).toContain("SUITE_NEW_PASSWORD: the admin's password");
    expect(r.stdout).toContain("never an option");
    expect(r.stdout).not.toContain("--admin-password");
    expect(SETTING_VARIABLES.length).toBeGreaterThan(20);
    for (const name of SETTING_VARIABLES) {
      const at = text.findIndex((l) => new RegExp(`^  --[a-z-]+, ${name} \\(default: .+\\)$`).test(l));
      expect({ name, listed: at > -1 }).toEqual({ name, listed: true });
      // The meaning: one indented line of words under it.
      expect(text[at + 1]).toMatch(/^ {6}\S.{10,}/);
    }
    expect(r.stdout).toContain("--port, SUITE_PORT (default: 8000)");
    expect(r.stdout).toContain("--db, SUITE_DB (default: ./data/suite.db)");
  }, 60_000);

  test("the README's command line and settings tables name every command and setting help lists", async () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    for (const name of SETTING_VARIABLES) expect({ name, inReadme: readme.includes(`| \`${name}\` |`) }).toEqual({ name, inReadme: true });
    const help = (await run(["help"])).stdout;
    for (const [, name] of help.matchAll(/^ {2}suite ([a-z]+(?: [a-z]+)?)/gm)) expect({ name, inReadme: readme.includes(`| \`suite ${name}`) }).toEqual({ name, inReadme: true });
  }, 60_000);

  test("--help and help COMMAND show one command; help for an unknown one fails with 64", async () => {
    for (const args of [["help", "tenant", "create"], ["tenant", "create", "--help"], ["help", "tenant"]]) {
      const r = await run(args);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("suite tenant create --name N");
      expect(r.stdout).not.toContain("suite backup");
    }
    const all = await run(["--help"]);
    expect(all.stdout).toContain("suite backup FILE");
    expect(oneLineFailure(await run(["help", "frobnicate"]), 64)).toBe("suite: unknown command frobnicate; see suite help");
  }, 60_000);
});

describe("unknown SUITE_* variables", () => {
  test("each is named once on stderr, with the closest known name when it looks like a typo; the command still runs", async () => {
    const r = await run(["version"], { SUITE_PROT: "8002", SUITE_SMTP: "smtp://h:25", SUITE_COMPLETELY_ELSEWHERE: "secret value 123" });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`suite ${pkg.version}\n`);
    expect(lines(r.stderr)).toEqual([
      "suite: warning: unknown variable SUITE_COMPLETELY_ELSEWHERE is ignored",
      "suite: warning: unknown variable SUITE_PROT is ignored; did you mean SUITE_PORT?",
      "suite: warning: unknown variable SUITE_SMTP is ignored; did you mean SUITE_SMTP_URL?",
    ]);
    // A value may be a secret: never shown.
    expect(r.stderr).not.toContain("secret value");
  }, 60_000);

  test("a server started with a typo warns once, then serves as usual", async () => {
    const db = join(dir, "typo", "suite.db");
    const s = await startServer(db, { SUITE_DB_PATH: "/elsewhere.db" });
    let stopped: Awaited<ReturnType<typeof s.stop>>;
    try {
      expect((await s.call("GET", "/api/v1/health")).status).toBe(200);
      expect((await s.call("GET", "/api/v1/health")).status).toBe(200);
    } finally {
      stopped = await s.stop();
    }
    expect(stopped.code).toBe(0);
    expect(stopped.stderr).toBe("suite: warning: unknown variable SUITE_DB_PATH is ignored; did you mean SUITE_DB?\n");
    expect(existsSync(db)).toBe(true);
  }, 60_000);

  test("every SUITE_ variable the code, the scripts and the tests use is known: none is warned about", async () => {
    const names = new Set<string>();
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        // This folder's tests spell unknown names on purpose.
        if (e.isDirectory()) p !== join(ROOT, "tests", "cli") && walk(p);
        else if (/\.(ts|tsx|sh)$/.test(e.name)) for (const m of readFileSync(p, "utf8").matchAll(/\bSUITE_[A-Z0-9_]*[A-Z0-9]\b/g)) names.add(m[0]);
      }
    };
    for (const d of ["src", "scripts", "tests"]) walk(join(ROOT, d));
    for (const name of SETTING_VARIABLES) expect(names.has(name)).toBe(true);
    expect(names.has("SUITE_HTTP_FUZZ_SEED")).toBe(true);
    const env = Object.fromEntries([...names].map((n) => [n, "x"]));
    const r = await run(["version"], env);
    expect(r.stderr).toBe("");
  }, 60_000);
});

describe("errors name what is missing, and why", () => {
  test("a missing option is reported as missing, all at once, with the usage", async () => {
    const db = join(dir, "missing", "suite.db");
    const line = oneLineFailure(await run(["tenant", "create", "--name", "Acme"], { SUITE_DB: db }), 64);
    expect(line).toStartWith("suite: tenant create: missing --subdomain and --admin-email; usage: suite tenant create --name N");
    const one = oneLineFailure(await run(["tenant", "create", "--name", "Acme", "--admin-email", "a@acme.io"], { SUITE_DB: db, SUITE_NEW_PASSWORD: "long enough pw" }), 64);
    expect(one).toStartWith("suite: tenant create: missing --subdomain;");
    expect(oneLineFailure(await run(["seed"], { SUITE_DB: db }), 64)).toStartWith("suite: seed: missing --tenant;");
    expect(oneLineFailure(await run(["backup"], { SUITE_DB: db }), 64)).toBe("suite: backup: missing FILE; usage: suite backup FILE");
    expect(oneLineFailure(await run(["tenant"], { SUITE_DB: db }), 64)).toStartWith("suite: tenant: missing the command; usage: suite tenant create --name N");
    expect(existsSync(db)).toBe(false);
  }, 60_000);

  test("an option without a value says so; a stray word or an unknown option names it and the command", async () => {
    const env = { SUITE_DB: join(dir, "never", "suite.db") };
    expect(oneLineFailure(await run(["tenant", "create", "--name"], env), 64)).toBe("suite: option --name needs a value (--name VALUE or --name=VALUE)");
    expect(oneLineFailure(await run(["migrate", "--db", "--port", "8001"], env), 64)).toBe("suite: option --db needs a value (--db VALUE or --db=VALUE)");
    expect(oneLineFailure(await run(["migrate", "--bogus", "1"], env), 64)).toBe("suite: migrate: unknown option --bogus; see suite help migrate");
    expect(oneLineFailure(await run(["migrate", "now"], env), 64)).toBe("suite: migrate: unexpected argument now; see suite help migrate");
    expect(oneLineFailure(await run(["serve", "-p", "8001"], env), 64)).toBe("suite: unknown option -p; options are long, e.g. --port 8000 (see suite help)");
    expect(oneLineFailure(await run(["tenant", "destroy"], env), 64)).toStartWith("suite: unknown command tenant destroy; usage: suite tenant create --name N");
  }, 60_000);

  test("a --db that cannot be opened names the path and the reason (78 before opening, 1 for what SQLite refuses), and changes nothing", async () => {
    const file = join(dir, "a-file");
    writeFileSync(file, "not a folder");
    const folder = join(dir, "a-folder");
    mkdirSync(folder);
    const cases: Array<[string, string]> = [
      [join(file, "suite.db"), `${file} is not a directory`],
      [join(file, "deeper", "suite.db"), `${file} is not a directory`],
      [folder, "it is a directory; --db names a file, e.g. ./data/suite.db"],
    ];
    for (const [db, why] of cases) {
      for (const command of [["migrate"], ["serve"], ["mail", "list"]]) {
        expect(oneLineFailure(await run([...command, "--db", db]), 78)).toBe(`suite: cannot open database ${db}: ${why}`);
      }
    }
    expect(readFileSync(file, "utf8")).toBe("not a folder");
    expect(readdirSync(folder)).toEqual([]);
    // A file that is no SQLite database: its name, and SQLite's word for it.
    const text = join(dir, "notes.db");
    writeFileSync(text, "these are my notes, not a database; ".repeat(10));
    for (const command of [["migrate"], ["serve"]]) {
      expect(oneLineFailure(await run([...command, "--db", text]), 1)).toBe(`suite: cannot open database ${text}: file is not a database (not a SQLite file: is --db the right path?)`);
    }
    expect(readFileSync(text, "utf8")).toBe("these are my notes, not a database; ".repeat(10));
  }, 60_000);

  test("a backup FILE that cannot be written names it and the folder at fault", async () => {
    const db = join(dir, "backed", "suite.db");
    expect((await run(["migrate"], { SUITE_DB: db })).code).toBe(0);
    const nowhere = join(dir, "no-such-folder", "copy.db");
    expect(oneLineFailure(await run(["backup", nowhere], { SUITE_DB: db }), 1)).toBe(`suite: cannot open ${nowhere}: directory ${join(dir, "no-such-folder")} does not exist`);
    const file = join(dir, "plain-file");
    writeFileSync(file, "x");
    expect(oneLineFailure(await run(["backup", join(file, "copy.db")], { SUITE_DB: db }), 1)).toBe(`suite: cannot open ${join(file, "copy.db")}: ${file} is not a directory`);
  }, 60_000);

  test("a --db where the OS denies writing says permission denied, naming the folder", async () => {
    // Root passes every permission check, so as root the command runs as nobody (setpriv).
    const asRoot = process.getuid?.() === 0;
    const prefix = asRoot ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : [];
    const shared = mkdtempSync(join(tmpdir(), "suite-denied-"));
    try {
      chmodSync(shared, 0o755);
      const locked = join(shared, "locked");
      mkdirSync(locked, { mode: 0o555 });
      chmodSync(locked, 0o555);
      // A checkout under /root (0700) is out of nobody's reach: it runs a bundle of the CLI with a
      // copy of bun, both in the shared folder, instead.
      let bun = BUN;
      let main = MAIN;
      if (asRoot) {
        bun = join(shared, "bun");
        copyFileSync(BUN, bun);
        chmodSync(bun, 0o755);
        const out = join(shared, "cli");
        const built = Bun.spawnSync([BUN, "build", MAIN, "--target=bun", "--outdir", out]);
        expect({ built: built.exitCode, stderr: built.stderr.toString() }).toEqual({ built: 0, stderr: "" });
        main = join(out, "main.js");
        for (const f of readdirSync(out)) chmodSync(join(out, f), 0o644);
      }
      const probe = Bun.spawnSync([...prefix, bun, "--version"]);
      expect({ unprivilegedBunRuns: probe.exitCode === 0 && statSync(main).mode & 0o004 }).toEqual({ unprivilegedBunRuns: 4 });
      const denied = async (db: string) => oneLineFailure(await runSuite(["migrate", "--db", db], { cwd: shared, prefix, bun, main }), 78);
      expect(await denied(join(locked, "suite.db"))).toBe(`suite: cannot open database ${join(locked, "suite.db")}: directory ${locked}: permission denied`);
      expect(await denied(join(locked, "sub", "suite.db"))).toBe(
        `suite: cannot open database ${join(locked, "sub", "suite.db")}: directory ${join(locked, "sub")} does not exist and cannot be made in ${locked}: permission denied`,
      );
      const readOnly = join(shared, "read-only.db");
      writeFileSync(readOnly, "");
      chmodSync(readOnly, 0o444);
      expect(await denied(readOnly)).toBe(`suite: cannot open database ${readOnly}: permission denied`);
      expect(readdirSync(locked)).toEqual([]);
    } finally {
      rmSync(shared, { recursive: true, force: true });
    }
  }, 60_000);
});
