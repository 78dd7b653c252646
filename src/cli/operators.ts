import type { Config } from "../config";
import { AppError } from "../kernel/errors";
import { UsageError } from "./args";
import { passwordOptionRefused, readNewPassword } from "./secret-input";
import { shortTime, table } from "./table";
import { Refused, openForOperator } from "./users";

type Out = (line: string) => void;
export type OperatorSub = "create" | "list" | "remove";

/**
 * `suite operator create|list|remove`: the people who may sign in to the operator console (on the
 * base domain, `/operator`). Apart from every organization's users. The password comes from a
 * prompt, SUITE_NEW_PASSWORD or stdin, never an option; the TOTP secret is printed once.
 */
export async function operatorCommand(config: Config, sub: OperatorSub, flags: Record<string, string>, out: Out): Promise<void> {
  if (flags.password !== undefined) throw new UsageError(`${passwordOptionRefused("password")}; nothing was created`);
  const email = flags.email?.trim().toLowerCase();
  if (sub !== "list" && !email) throw new UsageError(`missing --email; usage: suite operator ${sub} --email E`);
  const ctx = await openForOperator(config);
  try {
    switch (sub) {
      case "list": {
        const rows = await ctx.operators.list();
        if (rows.length === 0) return out("no operators yet: create one with suite operator create --email E");
        for (const line of table(["EMAIL", "CREATED", "LAST SIGN-IN"], rows.map((o) => [o.email, shortTime(o.created_at), o.last_sign_in_at === null ? "never" : shortTime(o.last_sign_in_at)]))) out(line);
        return;
      }
      case "create": {
        // A taken address is said before anyone types a password; no transaction waits on the prompt.
        if (await ctx.repos.operators.byEmail(email!)) throw new UsageError(`an operator with the email ${email} already exists; see suite operator list`);
        const password = await readNewPassword();
        const made = await ctx.operators.create(email!, password);
        out(`created operator ${made.operator.email}`);
        out("two-factor authentication is required: add this secret to an authenticator app now (it is shown only once)");
        out(`  secret: ${made.secret}`);
        out(`  uri:    ${made.otpauthUrl}`);
        out("backup codes: each signs in once in place of the app's code; keep them apart from the password (shown only once; new ones from the console)");
        for (const c of made.backupCodes) out(`  ${c}`);
        out(`then sign in at ${config.publicUrl.replace(/\/$/, "")}/operator (the base domain, not an organization's address)`);
        return;
      }
      case "remove": {
        if (!(await ctx.operators.remove(email!))) throw new UsageError(`no operator has the email ${email}; see suite operator list`);
        return out(`removed operator ${email}; their sessions have ended`);
      }
    }
  } catch (e) {
    if (e instanceof AppError) throw e.status === 409 || e.status === 422 ? new UsageError(`${e.detail} Nothing was created.`) : new Refused(e.detail);
    throw e;
  } finally {
    await ctx.close();
  }
}
