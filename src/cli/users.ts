import { existsSync } from "node:fs";
import type { Config } from "../config";
import type { Context } from "../context";
import { openContext } from "./open";
import { AppError } from "../kernel/errors";
import { UsageError } from "./args";
import { passwordOptionRefused, readNewPassword } from "./secret-input";
import { shortTime, table } from "./table";

type Out = (line: string) => void;

/** Every option a `suite user …` command may take (main.ts splits them off the server settings). */
export const USER_FLAGS = ["tenant", "email", "reassign-to", "password", "new-password"];

const USAGE = {
  list: "suite user list --tenant S",
  "reset-password": "suite user reset-password --tenant S --email E   (the password: prompt, SUITE_NEW_PASSWORD or stdin)",
  "reset-2fa": "suite user reset-2fa --tenant S --email E",
  unlock: "suite user unlock --tenant S --email E",
  remove: "suite user remove --tenant S --email E [--reassign-to EMAIL]",
} as const;
export type UserSub = keyof typeof USAGE;

/** Opens the database the way every admin command does: it must exist (a typo in --db must not create one). */
export async function openForOperator(config: Config, opts: Parameters<typeof openContext>[1] = {}): Promise<Context> {
  if (!config.databaseUrl && config.db !== ":memory:" && !existsSync(config.db)) throw new UsageError(`no database at ${config.db}`);
  return openContext(config, opts);
}

/**
 * A service's refusal as one line for the operator: an unknown name is a usage error (64); a
 * refusal by the data's state (the last admin) a plain failure (1).
 */
export class Refused extends Error {}
export function explain(e: unknown, names: { tenant?: string; email?: string } = {}): unknown {
  if (!(e instanceof AppError)) return e;
  if (e.code === "tenant_not_found") return new UsageError(`no organization has the subdomain ${names.tenant ?? ""}; see suite tenant list`);
  if (e.code === "user_not_found" && names.email) return new UsageError(`no user with the email ${names.email.toLowerCase()} in ${names.tenant}; see suite user list --tenant ${names.tenant}`);
  if (e.status === 404 || e.status === 422) return new UsageError(e.detail);
  return new Refused(e.detail);
}

/** `suite user list|reset-password|reset-2fa|unlock|remove`: helping a user, from the server's own machine. */
export async function userCommand(config: Config, sub: UserSub, flags: Record<string, string>, out: Out): Promise<void> {
  // main.ts's command table has checked the options each subcommand takes and needs; --password is
  // let through only to be refused here by name.
  for (const f of ["password", "new-password"]) {
    if (flags[f] !== undefined) throw new UsageError(passwordOptionRefused(f));
  }
  const tenant = flags.tenant?.trim();
  if (!tenant) throw new UsageError(`missing --tenant (the organization's subdomain); usage: ${USAGE[sub]}`);
  const email = flags.email?.trim();
  if (sub !== "list" && !email) throw new UsageError(`missing --email (the user's address); usage: ${USAGE[sub]}`);
  if (flags["reassign-to"] !== undefined && !flags["reassign-to"].trim()) throw new UsageError(`--reassign-to needs a member's email; usage: ${USAGE.remove}`);
  const ctx = await openForOperator(config);
  try {
    const by = { command: `user ${sub}` };
    const t = await ctx.tenants.bySubdomain(tenant);
    // A typo in the organization or the address is said before anyone types a password. No
    // transaction is open while the prompt waits.
    const password = sub === "reset-password" ? (await ctx.support.find(t.id, email!), await readNewPassword()) : null;
    switch (sub) {
      case "list": {
        const users = await ctx.support.list(t.id);
        if (users.length === 0) return out(`${t.subdomain} has no members`);
        const rows = users.map((u) => [u.email, u.full_name ?? "", u.role, u.two_factor ? "on" : "off", u.locked ? "locked" : "", u.last_sign_in === null ? "never" : shortTime(u.last_sign_in)]);
        for (const line of table(["EMAIL", "NAME", "ROLE", "2FA", "LOCKED", "LAST SIGN-IN"], rows)) out(line);
        return;
      }
      case "reset-password": {
        const ended = await ctx.support.resetPassword(t, email!, password!, by);
        return out(`new password set for ${email!.toLowerCase()} in ${t.subdomain}; ${ended} session(s) ended`);
      }
      case "reset-2fa": {
        const r = await ctx.support.resetSecondFactor(t.id, email!, by);
        const what = r.wasEnabled ? "second factor turned off and backup codes removed" : "second factor was not on (any pending setup removed)";
        return out(`${what} for ${email!.toLowerCase()} in ${t.subdomain}; ${r.sessionsEnded} session(s) ended`);
      }
      case "unlock":
        await ctx.support.unlock(t.id, email!, by);
        return out(`sign-in lockout lifted for ${email!.toLowerCase()} in ${t.subdomain}`);
      case "remove": {
        const to = flags["reassign-to"]?.trim() ?? null;
        const r = await ctx.support.remove(t.id, email!, to, by);
        return out(`removed ${email!.toLowerCase()} from ${t.subdomain}; ${r.dealsMoved} deal(s) ${to ? `reassigned to ${to.toLowerCase()}` : "left unassigned"}`);
      }
    }
  } catch (e) {
    throw explain(e, { tenant, email });
  } finally {
    await ctx.close();
  }
}
