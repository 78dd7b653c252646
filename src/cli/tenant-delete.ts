import { createInterface } from "node:readline";
import type { Config } from "../config";
import { writeTo } from "../kernel/broken-pipe";
import type { Logger } from "../kernel/logger";
import { UsageError } from "./args";
import { explain, openForOperator } from "./users";

type Out = (line: string) => void;

/**
 * The command's log: only the server audit entries (one JSON line each, on stderr, as the server
 * writes its log), so that whoever collects the command's output keeps the record of who deleted
 * what; every other line of the stores' log stays quiet, as in every operator command.
 */
const auditLines: Logger = (line) => {
  if (line.msg === "server audit") writeTo(process.stderr, `${JSON.stringify({ time: new Date().toISOString(), ...line })}\n`);
};

/** The confirmation: the subdomain typed again (a terminal's prompt, or the first line of stdin). */
async function typedSubdomain(subdomain: string): Promise<string> {
  writeTo(process.stderr, `This deletes the organization ${subdomain} and all its data (a final CSV export is kept 7 days).\nType its subdomain to confirm: `);
  const lines = createInterface({ input: process.stdin, terminal: false });
  try {
    for await (const line of lines) return line.trim();
    return "";
  } finally {
    lines.close();
    // What was typed (piped in) did not end the prompt's line.
    if (!process.stdin.isTTY) writeTo(process.stderr, "\n");
  }
}

/**
 * `suite tenant delete SUBDOMAIN [--yes]`: deletes an organization (src/organization/delete.ts),
 * after the subdomain is typed again or `--yes`. Run again on a deletion a crash interrupted, it
 * finishes it (so does the next `suite serve`). Prints where the final export is.
 */
export async function tenantDeleteCommand(config: Config, subdomain: string | undefined, flags: Record<string, string>, out: Out): Promise<void> {
  const sub = subdomain?.trim().toLowerCase();
  if (!sub) throw new UsageError("missing the organization's subdomain; usage: suite tenant delete SUBDOMAIN [--yes]");
  const ctx = await openForOperator(config, { log: auditLines });
  try {
    const deletion = ctx.organizationDeletion;
    const interrupted = (await deletion.pending()).find((p) => p.subdomain === sub);
    if (!interrupted && !(await ctx.repos.tenants.bySubdomain(sub))) throw new UsageError(`no organization has the subdomain ${sub}; see suite tenant list`);
    if (flags.yes === undefined) {
      const typed = await typedSubdomain(sub);
      if (typed.toLowerCase() !== sub) throw new UsageError(`the subdomain typed (${typed || "nothing"}) is not ${sub}; nothing was deleted`);
    }
    const by = { actor: "cli", command: "tenant delete" };
    const r = interrupted ? await deletion.run(interrupted.tenantId) : await deletion.deleteOrganization(sub, by);
    out(`deleted ${r.subdomain} (${r.tenantId})${interrupted ? ", finishing a deletion that had been interrupted" : ""}: ${r.rows} rows in ${r.batches} batches`);
    if (r.export) {
      out(`final export, kept 7 days (0600 files; readable by the server's user only): ${r.export.dir}`);
      for (const f of Object.values(r.export.files)) out(`  ${f}`);
    }
  } catch (e) {
    throw explain(e, { tenant: sub });
  } finally {
    await ctx.close();
  }
}
