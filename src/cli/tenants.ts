import type { Config } from "../config";
import { UsageError } from "./args";
import { shortTime, table } from "./table";
import { explain, openForOperator } from "./users";

type Out = (line: string) => void;

/** `suite tenant list`, `suite tenant disable S`, `suite tenant enable S` (`tenant create` is in admin.ts). */
export async function tenantAdminCommand(config: Config, sub: "list" | "disable" | "enable", subdomain: string | undefined, out: Out): Promise<void> {
  // main.ts's command table has checked the arguments; an empty one is still no subdomain.
  if (sub !== "list" && !subdomain) throw new UsageError(`missing the organization's subdomain; usage: suite tenant ${sub} SUBDOMAIN`);

  const ctx = await openForOperator(config);
  try {
    if (sub === "list") {
      const tenants = await ctx.tenants.listAll();
      if (tenants.length === 0) return out("no organizations yet: create one with suite tenant create");
      const rows = tenants.map((t) => [t.subdomain, t.name, String(t.members), shortTime(Date.parse(t.created_at)), t.disabled_at ? `disabled ${shortTime(Date.parse(t.disabled_at))}` : ""]);
      for (const line of table(["SUBDOMAIN", "NAME", "MEMBERS", "CREATED", "DISABLED"], rows)) out(line);
      return;
    }
    const disable = sub === "disable";
    const r = await ctx.tenants.setDisabled(subdomain!, disable, { command: `tenant ${sub}` });
    if (!r.changed) return out(`${r.tenant.subdomain} is already ${disable ? "disabled" : "enabled"}; nothing changed`);
    out(
      disable
        ? `disabled ${r.tenant.subdomain}: its data is kept; every request to it, sign-in included, now answers 403 tenant_disabled (suite tenant enable ${r.tenant.subdomain} undoes it)`
        : `enabled ${r.tenant.subdomain}: its members can sign in again, and their sessions work again`,
    );
  } catch (e) {
    throw explain(e, { tenant: subdomain });
  } finally {
    await ctx.close();
  }
}
