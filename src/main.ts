#!/usr/bin/env bun
import "./production";
import { dirname, resolve } from "node:path";
import pkg from "../package.json";
import { backupCommand, migrateCommand, tenantCreateCommand } from "./cli/admin";
import { type Command, UsageError, checkInvocation, findCommand, helpText, parseArgs } from "./cli/args";
import { checkDatabasePath, describeFileError } from "./cli/db-path";
import { copyToPostgresCommand } from "./cli/copy-to-postgres";
import { mailListCommand } from "./cli/mail";
import { restoreCommand } from "./cli/restore";
import { tenantAdminCommand } from "./cli/tenants";
import { tenantDeleteCommand } from "./cli/tenant-delete";
import { type UserSub, userCommand } from "./cli/users";
import { operatorCommand } from "./cli/operators";
import { SEED_FLAGS, seedCommand } from "./cli/seed";
import { PortInUse, serve } from "./cli/serve";
import { DEFAULT_ENV_FILE, applyEnvFile } from "./cli/env-file";
import { CONFIG_FLAGS, ConfigError, loadConfig, settingsHelp, unknownVariableWarnings } from "./config";
import { NewerDatabase, refuseNewerFile } from "./db/migrate";
import { freeBytes, isStorageFull } from "./db/disk-room";
import { endQuietlyOnBrokenPipe, writeTo } from "./kernel/broken-pipe";

const out = (line: string): void => writeTo(process.stdout, `${line}\n`);

/** `--env-file`, for `suite help` (read by main before the settings below: src/cli/env-file.ts). */
const ENV_FILE_HELP =
  `  --env-file PATH (default: ${DEFAULT_ENV_FILE}, when it exists and is readable)\n` +
  "      KEY=VALUE lines, as systemd's EnvironmentFile reads them: the server's settings for any command; a variable already in the environment wins, a flag wins over both";

/**
 * Every command: `suite help` is generated from this table, and main checks each invocation
 * against its entry (options, arguments, what it needs) before calling `run`. A new command is one
 * entry here (above version and help, which end the help text).
 */
const COMMANDS: Command[] = [
  { name: "serve", help: "serve the web app and the API (the default command); stops cleanly on SIGTERM", run: ({ config }) => serve(config) },
  { name: "migrate", help: "create or upgrade the database (an upgraded file is copied to <db>.v<N>.bak first), then exit", run: ({ config }) => migrateCommand(config, out) },
  {
    name: "tenant create",
    usage: "--name N --subdomain S --admin-email E [--admin-name NAME] [--modules crm,users]",
    help: "create an organization and its first admin, as signup does; the admin's password from a prompt (no echo), SUITE_NEW_PASSWORD or stdin, never an option",
    // --admin-password is accepted here only so that admin.ts can refuse it by name (it would show in ps).
    flags: ["name", "subdomain", "admin-email", "admin-password", "admin-name", "modules"],
    needs: ["name", "subdomain", "admin-email"],
    env: {
      SUITE_NEW_PASSWORD: "the admin's password (kept out of the process list)",
      SUITE_ADMIN_PASSWORD: "the same, under its older name (SUITE_NEW_PASSWORD wins)",
    },
    run: ({ config, flags }) => tenantCreateCommand(config, flags, out),
  },
  {
    name: "mail list",
    usage: "[--limit N]",
    help: "the outbox, newest first: recipient, subject, status, and the link while pending (no SMTP: hand it over)",
    flags: ["limit"],
    run: ({ config, flags }) => mailListCommand(config, flags, out),
  },
  {
    name: "seed",
    usage: "--tenant S [--deals N]",
    help: "demo CRM data for organization S (created first if missing); prints the demo password",
    flags: SEED_FLAGS,
    needs: ["tenant"],
    env: { SUITE_SEED_PASSWORD: "the demo users' password, instead of a random one" },
    run: ({ config, flags }) => seedCommand(config, flags, out),
  },
  {
    name: "backup",
    usage: "FILE",
    help: "write a consistent, integrity-checked copy of the live database to FILE (the keys stay in <db>.keys)",
    args: ["FILE"],
    run: ({ config, args }) => backupCommand(config, args[0], out),
  },
  {
    name: "restore",
    usage: "[--adopt-keys] FILE",
    help:
      "with the server stopped: check the backup FILE, keep the current database aside (<db>.before-restore-<time>), put FILE in its place; " +
      "a backup holding keys (made before the key file) is refused unless --adopt-keys makes its keys the key file's (the old file kept aside)",
    flags: ["adopt-keys"],
    args: ["FILE"],
    run: ({ config, args, flags }) => restoreCommand(config, args[0], out, new Date(), { adoptKeys: flags["adopt-keys"] !== undefined }),
  },
  {
    name: "copy-to-postgres",
    usage: "--database-url postgres://…",
    help: "copy the SQLite database (--db) into an EMPTY PostgreSQL database in one transaction, check every table's count, print what to change to switch",
    run: ({ config }) => copyToPostgresCommand(config, out),
  },
  { name: "tenant list", help: "every organization: subdomain, name, members, created, disabled", run: ({ config }) => tenantAdminCommand(config, "list", undefined, out) },
  {
    name: "tenant disable",
    usage: "SUBDOMAIN",
    help: "the organization answers 403 tenant_disabled (sign-in and sessions too); its data is kept",
    args: ["SUBDOMAIN"],
    run: ({ config, args }) => tenantAdminCommand(config, "disable", args[0], out),
  },
  { name: "tenant enable", usage: "SUBDOMAIN", help: "undoes tenant disable", args: ["SUBDOMAIN"], run: ({ config, args }) => tenantAdminCommand(config, "enable", args[0], out) },
  {
    name: "tenant delete",
    usage: "SUBDOMAIN [--yes]",
    help:
      "delete the organization and every row of it, after a final CSV export of its deals, accounts and contacts kept 7 days beside the database (printed); " +
      "asks for the subdomain again unless --yes; run again (or restart the server) to finish one a crash interrupted",
    flags: ["yes"],
    args: ["SUBDOMAIN"],
    run: ({ config, args, flags }) => tenantDeleteCommand(config, args[0], flags, out),
  },
  ...userCommands(),
  {
    name: "operator create",
    usage: "--email E",
    help: "an operator of this server (the console at /operator on the base domain, apart from every organization); the password from a prompt (no echo), SUITE_NEW_PASSWORD or stdin, never an option; prints the TOTP secret once",
    // --password is accepted here only so that operators.ts can refuse it by name (it would show in ps).
    flags: ["email", "password"],
    needs: ["email"],
    env: { SUITE_NEW_PASSWORD: "the operator's password for suite operator create (kept out of the process list)" },
    run: ({ config, flags }) => operatorCommand(config, "create", flags, out),
  },
  { name: "operator list", help: "every operator: email, created, last sign-in", run: ({ config }) => operatorCommand(config, "list", {}, out) },
  {
    name: "operator remove",
    usage: "--email E",
    help: "remove an operator; their console sessions end",
    flags: ["email"],
    needs: ["email"],
    run: ({ config, flags }) => operatorCommand(config, "remove", flags, out),
  },
  { name: "version", help: "print the version (also --version)", config: false, run: () => out(`suite ${pkg.version}`) },
  { name: "help", usage: "[COMMAND]", help: "this text, or one command's (also --help)", anyArgs: true, config: false, run: ({ args }) => out(helpText(COMMANDS, args, `${ENV_FILE_HELP}\n${settingsHelp()}`)) },
];

/** `suite user …`: helping a user from the server's own machine (src/cli/users.ts checks the rest). */
function userCommands(): Command[] {
  const one = (sub: UserSub, usage: string, help: string, flags: string[], env?: Record<string, string>): Command => ({
    name: `user ${sub}`,
    usage,
    help,
    // --password is accepted here only so that users.ts can refuse it by name (it would show in ps).
    flags: [...flags, "password", "new-password"],
    needs: sub === "list" ? ["tenant"] : ["tenant", "email"],
    env,
    run: ({ config, flags: own }) => userCommand(config, sub, own, out),
  });
  return [
    one("list", "--tenant S", "members of S: email, name, role, 2FA, locked, last sign-in", ["tenant"]),
    one("reset-password", "--tenant S --email E", "a new password from a prompt (no echo), SUITE_NEW_PASSWORD or stdin, never an option; ends the user's sessions", ["tenant", "email"], {
      SUITE_NEW_PASSWORD: "the new password for suite user reset-password (kept out of the process list)",
    }),
    one("reset-2fa", "--tenant S --email E", "second factor off, backup codes removed, sessions ended", ["tenant", "email"]),
    one("unlock", "--tenant S --email E", "lift the user's sign-in lockout", ["tenant", "email"]),
    one("remove", "--tenant S --email E [--reassign-to EMAIL]", "remove the member; their deals go to EMAIL or become unassigned", ["tenant", "email", "reassign-to"]),
  ];
}

/** The database the command works on, for the line that reports a failure to open it. */
let database: string | null = null;

async function main(argv: string[]): Promise<void> {
  endQuietlyOnBrokenPipe();
  const { words, flags } = parseArgs(argv);
  const { command, rest } = findCommand(COMMANDS, words.length === 0 ? ["serve"] : words);
  // The server's settings file (the unit's EnvironmentFile), under what this process was given;
  // help and version read no setting (a bad one must not hide the help that explains it).
  if (command.config !== false) {
    const envFile = applyEnvFile(flags["env-file"], process.env);
    delete flags["env-file"];
    for (const warning of envFile.warnings) writeTo(process.stderr, `suite: warning: ${warning}\n`);
  }
  // Once, before anything: a misspelt variable would otherwise be silently ignored.
  const known = COMMANDS.flatMap((c) => Object.keys(c.env ?? {}));
  for (const warning of unknownVariableWarnings(process.env, known)) writeTo(process.stderr, `suite: warning: ${warning}\n`);
  if (command.config === false) return command.run({ config: undefined as never, flags: {}, args: rest });

  const own = checkInvocation(command, rest, flags, CONFIG_FLAGS, process.env);
  const config = loadConfig(flags);
  checkDatabasePath((database = config.db));
  // An older suite started on a newer database stops before it opens (and so changes) the file.
  refuseNewerFile(config.db);
  return command.run({ config, flags: own, args: rest });
}

/**
 * The database's folder has no room for its files (the database, -wal, -shm, key file): one line
 * with the OS's reason and what is free, exit 78 like any other file the suite is refused. SQLite
 * says "disk I/O error" when it cannot grow its -shm on a full disk: that too, when space is short.
 */
function noRoom(e: unknown): string | null {
  if (!database || database === ":memory:") return null;
  const dir = dirname(resolve(database));
  let free: number;
  try {
    free = freeBytes(dir);
  } catch {
    return null;
  }
  const code = String((e as { code?: unknown }).code ?? "");
  if (!isStorageFull(e) && !(/^SQLITE_(IOERR|CANTOPEN)/.test(code) && free < 1024 * 1024)) return null;
  return `cannot use database ${database}: no space left on device (${dir} has ${Math.floor(free / 1024)} KB free); free some space and start again`;
}

/** One line naming what failed and why; never a stack trace. */
function describe(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  if (e instanceof ConfigError || e instanceof UsageError || e instanceof NewerDatabase) return message;
  const full = noRoom(e);
  if (full) return full;
  const errno = e as NodeJS.ErrnoException;
  // A file the command could not open or write: the path and the OS's reason.
  if (typeof errno.code === "string" && typeof errno.path === "string" && /^E[A-Z]+$/.test(errno.code)) {
    const what = describeFileError(errno as NodeJS.ErrnoException & { path: string });
    return database && `${resolve(database)}/`.startsWith(`${resolve(errno.path)}/`) ? `cannot open database ${database}: ${what}` : what;
  }
  // SQLite's own words name no file: say which one, and whether it could be opened at all.
  const sqlite = (e as { code?: unknown }).code;
  if (database && typeof sqlite === "string" && sqlite.startsWith("SQLITE_")) {
    const opening = /^SQLITE_(NOTADB|CANTOPEN|CORRUPT|READONLY|PERM|AUTH)/.test(sqlite);
    return `${opening ? "cannot open database" : "database"} ${database}: ${message}${sqlite === "SQLITE_NOTADB" ? " (not a SQLite file: is --db the right path?)" : ""}`;
  }
  if (database && /unable to open database|disk I\/O error|readonly database/i.test(message)) return `cannot open database ${database}: ${message}`;
  return message;
}

main(process.argv.slice(2)).catch((e: unknown) => {
  writeTo(process.stderr, `suite: ${describe(e).split("\n")[0]}\n`);
  process.exit(e instanceof UsageError ? 64 : e instanceof ConfigError || e instanceof NewerDatabase || noRoom(e) ? 78 : e instanceof PortInUse ? e.exitCode : 1);
});
