import type { Config } from "../config";
import { openContext } from "./open";
import { newSecretToken } from "../kernel/ids";
import { SUBDOMAIN_PATTERN } from "../organization/model";
import { UsageError } from "./args";

type Out = (line: string) => void;

export const SEED_FLAGS = ["tenant", "deals"];
const MAX_DEALS = 10_000_000;

/**
 * `suite seed --tenant S --deals N`: demo CRM data for an organization (created first, with an
 * admin, when no organization has that subdomain). Every demo user shares one password, hashed
 * once and printed.
 */
export async function seedCommand(config: Config, flags: Record<string, string>, out: Out): Promise<void> {
  const subdomain = (flags.tenant ?? "").trim().toLowerCase();
  if (!new RegExp(SUBDOMAIN_PATTERN).test(subdomain) || subdomain.length < 3) throw new UsageError("usage: suite seed --tenant SUBDOMAIN --deals N");
  const deals = flags.deals === undefined ? 10_000 : Number(flags.deals);
  if (!Number.isInteger(deals) || deals < 0 || deals > MAX_DEALS) throw new UsageError(`--deals must be a whole number from 0 to ${MAX_DEALS}`);

  const ctx = await openContext(config);
  let created: string | null = null;
  try {
    const password = process.env.SUITE_SEED_PASSWORD || `demo-${newSecretToken().slice(0, 12)}`;
    let tenant = await ctx.repos.tenants.bySubdomain(subdomain);
    const admin = `admin@${subdomain}.example`;
    if (!tenant) {
      await ctx.tenants.createOrganization(
        { email: admin, password, tenant_name: subdomain[0]!.toUpperCase() + subdomain.slice(1), subdomain },
        { ip: null, userAgent: "suite-seed" },
        "cli",
      );
      tenant = (await ctx.repos.tenants.bySubdomain(subdomain))!;
      created = tenant.id;
      out(`created tenant ${subdomain} with admin ${admin}`);
    }
    const passwordHash = await ctx.hasher.hash(password);
    const job = { tenantId: tenant.id, subdomain, deals, passwordHash };
    const started = performance.now();
    const r = await ctx.repos.seed.seed(job, ctx.now(), {
      alongside: () => out(`${config.db} is open elsewhere (a running server?): seeding alongside it, in small transactions`),
      progress: (done, total) => out(`  ${done.toLocaleString("en-US")} / ${total.toLocaleString("en-US")} deals`),
      held: (ms, what) => out(`  longest write transaction: ${ms.toFixed(1)} ms (${what}; the server's writes waited at most about that long for one)`),
    });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    out(`seeded ${subdomain}: ${r.deals} deals, ${r.accounts} accounts, ${r.contacts} contacts, ${r.users} users in ${seconds} s`);
    // Every demo address, the seed's admin included, now has this password (a re-seed sets it anew).
    const hasAdmin = Boolean(await ctx.repos.users.byEmail(tenant.id, admin));
    out(`the demo users (…@${subdomain}.example${hasAdmin ? `, ${admin} included` : ""}) sign in with the password: ${password}`);
    created = null;
  } finally {
    // A seed that failed leaves no organization it created behind.
    if (created) await ctx.repos.seed.removeTenant(created).catch(() => {});
    await ctx.close();
  }
}
