import { type Config, ConfigError, maskDatabaseUrl } from "../config";
import { type Context, type ContextOptions, createContext } from "../context";
import { NewerDatabase } from "../db/migrate";
import { writeTo } from "../kernel/broken-pipe";
import { DEFAULT_ENV_FILE } from "./env-file";

/**
 * The context a command works with, once its database answers: on PostgreSQL, after the schema's
 * migration and the key file's check (createContext is synchronous and opens PostgreSQL behind a
 * gate; this awaits it). A server that cannot be reached, refuses the login or holds another
 * release's schema is one clear line, and the command exits non-zero.
 */
export async function openContext(config: Config, opts: Omit<ContextOptions, "config"> = {}): Promise<Context> {
  const ctx = createContext({ config, log: () => {}, ...opts });
  if (config.publicUrlIsDefault) warnOnDefaultLinks(ctx, config.publicUrl);
  try {
    await ctx.ping();
  } catch (e) {
    await Promise.resolve(ctx.close()).catch(() => {});
    throw unavailable(config, e);
  }
  return ctx;
}

/**
 * A command about to mail a link (an invitation, the new admin's address check) while
 * SUITE_PUBLIC_URL is unset builds it on the command's own default (http://localhost:8000 …),
 * which the recipient cannot open: one warning line on stderr, naming the address and the fix.
 * Every store writes mail through the mail store's enqueueInTx, looked up at call time.
 */
function warnOnDefaultLinks(ctx: Context, publicUrl: string): void {
  const mail = ctx.repos.mail as unknown as { enqueueInTx: (...args: unknown[]) => unknown };
  const enqueue = mail.enqueueInTx;
  let warned = false;
  mail.enqueueInTx = (...args: unknown[]) => {
    const m = args.find((a): a is { link: string | null; recipient: string } => typeof a === "object" && a !== null && "recipient" in a && "link" in a);
    if (m?.link && !warned) {
      warned = true;
      // The link's origin only: its token (in the fragment) stays out of the line.
      const origin = URL.canParse(m.link) ? new URL(m.link).origin : publicUrl;
      writeTo(
        process.stderr,
        `suite: warning: SUITE_PUBLIC_URL is not set: the link mailed to ${m.recipient} points at ${origin}, from this command's default ${publicUrl}; ` +
          `set SUITE_PUBLIC_URL in ${DEFAULT_ENV_FILE} (the server's settings file) or give --env-file or --public-url\n`,
      );
    }
    return enqueue.apply(mail, args);
  };
}

/** Why the database cannot be used, as one line for the operator. */
export function unavailable(config: Config, e: unknown): unknown {
  if (!config.databaseUrl || e instanceof ConfigError || e instanceof NewerDatabase) return e;
  const err = e as { message?: string; code?: string; errno?: string };
  const why = err?.message || String(e);
  return new ConfigError(`cannot use PostgreSQL at ${maskDatabaseUrl(config.databaseUrl)}: ${why}`);
}

/** SQLite's file tools (backup, restore) on PostgreSQL: PostgreSQL's own tools are the way. */
export function refuseOnPostgres(config: Config, command: "backup" | "restore"): void {
  if (!config.databaseUrl) return;
  throw new ConfigError(
    `suite ${command} copies the SQLite file; this suite runs on PostgreSQL (${maskDatabaseUrl(config.databaseUrl)}): ` +
      (command === "backup"
        ? "use PostgreSQL's own tools: pg_dump -Fc (a logical copy), or pg_basebackup with WAL archiving for point-in-time recovery; keep <db>.keys with it"
        : "use PostgreSQL's own tools: pg_restore into an empty database (a pg_dump -Fc file), or point-in-time recovery from a base backup and archived WAL"),
  );
}
