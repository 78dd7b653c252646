import { existsSync } from "node:fs";
import type { Config } from "../config";
import { toIso } from "../kernel/ids";
import { openContext } from "./open";
import { UsageError } from "./args";

type Out = (line: string) => void;

/**
 * `suite mail list`: the outbox, newest first. Without SMTP it is how an operator hands a user
 * their link; the link shows only while the mail is pending (it is erased once sent or failed).
 */
export async function mailListCommand(config: Config, flags: Record<string, string>, out: Out): Promise<void> {
  const raw = flags.limit ?? "50";
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 10_000) throw new UsageError("--limit expects a whole number from 1 to 10000");
  if (!config.databaseUrl && !existsSync(config.db)) throw new UsageError(`no database at ${config.db}`);
  const ctx = await openContext(config);
  try {
    const rows = await ctx.repos.mail.list(Number(raw));
    if (rows.length === 0) return out("the outbox is empty");
    for (const r of rows) {
      out(`${toIso(r.created_at)}  ${r.status.padEnd(7)}  ${r.kind}  to ${r.recipient}`);
      out(`  subject: ${r.subject}`);
      if (r.status === "pending" || r.status === "sending") {
        if (r.link) out(`  link:    ${r.link}`);
        if (r.attempts > 0) out(`  attempts: ${r.attempts}, next at ${toIso(r.next_attempt_at)}${r.last_error ? `, last error: ${r.last_error}` : ""}`);
      } else if (r.status === "sent" && r.sent_at !== null) out(`  sent:    ${toIso(r.sent_at)}`);
      else if (r.status === "failed") out(`  failed after ${r.attempts} attempts: ${r.last_error ?? "unknown error"}`);
    }
  } finally {
    await ctx.close();
  }
}
