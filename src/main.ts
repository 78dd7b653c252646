#!/usr/bin/env bun
import "./production";
import { backupCommand, migrateCommand, tenantCreateCommand } from "./cli/admin";
import { UsageError, parseArgs, takeFlags } from "./cli/args";
import { mailListCommand } from "./cli/mail";
import { restoreCommand } from "./cli/restore";
import { SEED_FLAGS, seedCommand } from "./cli/seed";
import { PortInUse, serve } from "./cli/serve";
import { CONFIG_FLAGS, ConfigError, loadConfig, settingsHelp } from "./config";

const HELP = `Workspace Suite: sign-in, organizations and a CRM, in one executable.

usage: suite [command] [options]

commands:
  serve                 serve HTTP (the default)
  migrate               create or upgrade the database, then exit
  tenant create         --name N --subdomain S --admin-email E --admin-password P
                        [--admin-name NAME] [--modules crm,users]
  mail list             [--limit N] the outbox, newest first: recipient, subject, status,
                        and the link while the mail is pending (no SMTP: hand it over)
  seed                  --tenant S [--deals N] demo CRM data (accounts, contacts, users, deals)
                        for organization S, created first if missing; prints the demo password
  backup FILE           write a consistent copy of the live database to FILE (the data
                        only: the keys stay in <db>.keys, to be copied apart)
  restore FILE          with the server stopped: check the backup FILE, keep the current
                        database aside (<db>.before-restore-<time>), put FILE in its place
  help                  this text

settings (flag or environment variable):
${settingsHelp()}
`;

const out = (line: string): void => void process.stdout.write(`${line}\n`);

async function main(argv: string[]): Promise<void> {
  const { words, flags } = parseArgs(argv);
  const [command = "serve", sub, ...rest] = words;
  const own =
    command === "tenant"
      ? takeFlags(flags, ["name", "subdomain", "admin-email", "admin-password", "admin-name", "modules"])
      : command === "mail"
        ? takeFlags(flags, ["limit"])
        : command === "seed"
          ? takeFlags(flags, SEED_FLAGS)
          : {};
  for (const name of Object.keys(flags)) if (!CONFIG_FLAGS.has(name)) throw new UsageError(`unknown option --${name}`);

  if (command === "help") return out(HELP);
  // A stray word is a mistake (a typo, a second FILE), never silently ignored.
  const extra = command === "serve" || command === "migrate" || command === "seed" ? [sub, ...rest] : command === "backup" || command === "restore" ? rest : [];
  if (extra[0] !== undefined) throw new UsageError(`unexpected argument ${extra[0]}; see suite help`);
  const config = loadConfig(flags);
  switch (command) {
    case "serve":
      return serve(config);
    case "migrate":
      return migrateCommand(config, out);
    case "mail":
      if (sub !== "list" || rest.length > 0) throw new UsageError("usage: suite mail list [--limit N]");
      return mailListCommand(config, own, out);
    case "backup":
      return backupCommand(config, sub, out);
    case "restore":
      return restoreCommand(config, sub, out);
    case "seed":
      return seedCommand(config, own, out);
    case "tenant":
      if (sub !== "create" || rest.length > 0) throw new UsageError("usage: suite tenant create --name N --subdomain S --admin-email E --admin-password P");
      return tenantCreateCommand(config, own, out);
    default:
      throw new UsageError(`unknown command ${command}; see suite help`);
  }
}

// Bad settings and usage stop with one clear line, never a stack trace.
main(process.argv.slice(2)).catch((e: unknown) => {
  if (e instanceof ConfigError || e instanceof UsageError) process.stderr.write(`suite: ${e.message}\n`);
  else process.stderr.write(`suite: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(e instanceof UsageError ? 64 : e instanceof ConfigError ? 78 : e instanceof PortInUse ? e.exitCode : 1);
});
