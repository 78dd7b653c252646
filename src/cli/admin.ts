import { Value } from "@sinclair/typebox/value";
import { closeSync, existsSync, openSync, rmSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Config } from "../config";
import { openPostgres } from "../stores/postgres/database";
import { migratePostgres } from "../stores/postgres/migrate";
import { maskDatabaseUrl } from "../config";
import { openContext, refuseOnPostgres, unavailable } from "./open";
import { fsyncPath, publishNew, tempBeside } from "../db/backup-files";
import { backupTo, openDatabase } from "../db/database";
import { copySnapshot, zeroFreePages } from "../db/snapshot-copy";
import { CURRENT_PLAN, migrate } from "../db/migrate";
import { KEY_NAMES, generateKeys, keyFileOf, loadServerKeys, moveStoredKeys } from "../security/key-file";
import { commonPasswordProblem } from "../security/common-passwords";
import { createKeyStore } from "../stores/sqlite/security";
import { prepareForCopy } from "../stores/sqlite";
import { sealClearOutbox } from "../stores/sqlite/mail";
import { createOutboxSeal } from "../mail/outbox-seal";
import { lowerCaseFields, toValidationItems } from "../kernel/validation";
import { SignupBody } from "../organization/model";
import { UsageError } from "./args";
import { NEW_PASSWORD_VARIABLE, passwordOptionRefused, readNewPassword } from "./secret-input";

type Out = (line: string) => void;

export async function migrateCommand(config: Config, out: Out): Promise<void> {
  if (config.databaseUrl) return migratePostgresCommand(config, config.databaseUrl, out);
  const db = openDatabase(config.db);
  try {
    // An earlier release's keys and clear mail leave the database before the migration copies it to `.v<N>.bak`.
    const r = migrate(db, CURRENT_PLAN, config.db, () => prepareForCopy(db, config.db, config));
    out(r.from === r.to ? `${config.db}: schema version ${r.to}, up to date` : `${config.db}: schema version ${r.from} -> ${r.to}`);
    if (r.backup) out(`previous database kept at ${r.backup}`);
    // Creates the key file, or moves an earlier release's keys out of the database into it.
    loadServerKeys(config.db, createKeyStore(db));
    out(`keys kept at ${keyFileOf(config.db)}`);
  } finally {
    db.close();
  }
}

/** `suite migrate` on PostgreSQL: the schema (once, under an advisory lock), then the key file checked against it. */
async function migratePostgresCommand(config: Config, url: string, out: Out): Promise<void> {
  const pg = openPostgres(url, { max: 1 });
  try {
    const r = await migratePostgres(pg).catch((e) => Promise.reject(unavailable(config, e)));
    const where = maskDatabaseUrl(url);
    out(r.from === r.to ? `${where}: schema version ${r.to}, up to date` : `${where}: schema version ${r.from} -> ${r.to}`);
  } finally {
    await pg.close();
  }
  // Opening the stores creates the key file (or checks it against the database).
  const ctx = await openContext(config);
  await ctx.close();
  out(`keys kept at ${keyFileOf(config.db)}`);
}

/**
 * `suite backup FILE`, also what the scheduled backups run (cli/backup-schedule.ts): a consistent
 * copy (a snapshot's bytes, db/snapshot-copy.ts; VACUUM INTO when none can be had) written under a temp name beside FILE,
 * integrity-checked, stripped of any key row, fsynced, then put in place under FILE without
 * replacing anything: FILE never exists half-written.
 */
export function backupCommand(config: Config, file: string | undefined, out: Out): void {
  if (!file) throw new UsageError("usage: suite backup FILE");
  refuseOnPostgres(config, "backup");
  if (existsSync(file)) throw new UsageError(`${file} already exists; choose a new file name`);
  if (!existsSync(config.db)) throw new UsageError(`no database at ${config.db}`);
  // The folder at fault, named as the OS would (exit 1: a file problem, not a usage mistake).
  const folder = dirname(resolve(file));
  if (!existsSync(folder)) throw new Error(`cannot open ${file}: directory ${folder} does not exist`);
  if (!statSync(folder).isDirectory()) throw new Error(`cannot open ${file}: ${folder} is not a directory`);
  const keyFile = keyFileOf(config.db);
  const tmp = tempBeside(file);
  let keys: ReturnType<typeof moveStoredKeys> = null;
  try {
    const db = openDatabase(config.db);
    try {
      // Keys an earlier release kept in the database go to the key file first: the copy holds data only.
      keys = moveStoredKeys(keyFile, createKeyStore(db));
      // A byte copy of a snapshot (seconds; the WAL is held up only that long), else VACUUM INTO.
      closeSync(openSync(tmp, "wx", 0o600));
      if (!copySnapshot(db, config.db, tmp)) {
        rmSync(tmp, { force: true });
        backupTo(db, tmp);
      }
    } finally {
      db.close();
    }
    // What deleted rows left in free pages stays out of the copy, as VACUUM INTO left it out.
    zeroFreePages(tmp);
    const check = openDatabase(tmp);
    let ok: string;
    try {
      // Read through a memory map: the check visits index pages again and again, and a 2 GB copy
      // read by pread through a 32 MiB cache took over 5 minutes; mapped, 2.6 (measured, 1M deals).
      check.run(`PRAGMA mmap_size = ${statSync(tmp).size}`);
      ok = (check.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check;
      // Belt and braces: no key row may reach a copy, not even in its free pages.
      check.run("PRAGMA secure_delete = ON");
      const leaked = check.run(`DELETE FROM settings WHERE key IN (${KEY_NAMES.map((k) => `'${k}'`).join(", ")})`).changes;
      // Unsent mail an earlier release left clear (a database not yet upgraded) is sealed in the copy.
      // Without a key (no key file yet) they are sealed under a key nobody keeps: no link survives.
      const clearMail = sealClearOutbox(check, createOutboxSeal(config.encryptionKey ?? keys?.encryption_key ?? generateKeys().encryption_key));
      if (leaked + clearMail > 0) check.run("VACUUM");
      // A single self-contained file: no -wal to travel with it.
      check.run("PRAGMA journal_mode = DELETE");
    } finally {
      check.close();
    }
    if (ok !== "ok") throw new Error(`the copy of ${config.db} failed its integrity check: ${ok}`);
    fsyncPath(tmp);
    publishNew(tmp, file);
  } finally {
    for (const f of [tmp, `${tmp}-wal`, `${tmp}-shm`, `${tmp}-journal`]) rmSync(f, { force: true });
  }
  out(`backed up ${config.db} to ${file} (${statSync(file).size} bytes, integrity ok)`);
  out(
    existsSync(keyFile)
      ? `the keys are not in the backup: keep a copy of ${keyFile} apart from it, and restore it beside the database as <db>.keys`
      : `no key file at ${keyFile}: no server has started on this database yet`,
  );
}

/** The variable earlier releases read the admin's password from; still accepted after SUITE_NEW_PASSWORD. */
export const OLD_ADMIN_PASSWORD_VARIABLE = "SUITE_ADMIN_PASSWORD";

/**
 * `suite tenant create`: what signup does. The admin's password comes from SUITE_NEW_PASSWORD (or
 * the older SUITE_ADMIN_PASSWORD), a prompt that does not echo, or stdin; never from an option,
 * which every user of the machine could read in `ps`: `--admin-password` is refused by name.
 */
export async function tenantCreateCommand(config: Config, flags: Record<string, string>, out: Out): Promise<void> {
  if (flags["admin-password"] !== undefined) throw new UsageError(`${passwordOptionRefused("admin-password")}; nothing was created`);
  const given = {
    email: flags["admin-email"] ?? "",
    tenant_name: flags.name ?? "",
    subdomain: flags.subdomain ?? "",
    ...(flags.modules !== undefined ? { initial_modules: flags.modules.split(",").map((m) => m.trim()).filter(Boolean) } : {}),
    ...(flags["admin-name"] !== undefined ? { full_name: flags["admin-name"] } : {}),
  };
  const names: Record<string, string> = { email: "--admin-email", password: "the admin's password", tenant_name: "--name", subdomain: "--subdomain", initial_modules: "--modules" };
  const explain = (items: { loc: Array<string | number>; msg: string }[]) =>
    items.map((i) => `${names[String(i.loc[1])] ?? i.loc.slice(1).join(".")}: ${i.msg}`).join("; ");
  const check = (input: Record<string, unknown>) => {
    if (!Value.Check(SignupBody, input)) throw new UsageError(explain(toValidationItems("body", [...Value.Errors(SignupBody, input)])));
  };
  lowerCaseFields("email", "subdomain")({ body: given });
  // A typo in the options is said before anyone types a password (a stand-in that meets the policy).
  check({ ...given, password: "x".repeat(12) });

  const ctx = await openContext(config);
  try {
    if (await ctx.repos.tenants.bySubdomain(given.subdomain)) throw new UsageError(`subdomain ${given.subdomain} is already taken`);
    // No transaction is open while the prompt waits.
    const input = { ...given, password: await readNewPassword([NEW_PASSWORD_VARIABLE, OLD_ADMIN_PASSWORD_VARIABLE]) };
    check(input);
    const common = await commonPasswordProblem(input.password, { email: input.email, organizationName: input.tenant_name, subdomain: input.subdomain });
    if (common) throw new UsageError(`the admin's password: ${common} Nothing was created.`);
    const { tenant, user } = await ctx.tenants.createOrganization(input, { ip: null, userAgent: "suite-cli" }, "cli");
    out(`created tenant ${tenant.subdomain} (${tenant.id}) with admin ${user.email} (${user.id}); modules: ${tenant.modules.join(", ") || "none"}`);
  } catch (e) {
    if (e instanceof Error && "code" in e && e.code === "subdomain_taken") throw new UsageError(`subdomain ${given.subdomain} is already taken`);
    throw e;
  } finally {
    await ctx.close();
  }
}
