import type { Config } from "../config";

type Line = Record<string, unknown>;

/** Where mail goes, without what the URL may carry besides the host (user and password). */
function smtpServer(smtpUrl: string): string {
  const url = new URL(smtpUrl);
  return `${url.protocol}//${url.hostname}${url.port ? `:${url.port}` : ""}`;
}

/**
 * The log lines that follow "listening": what an operator starting the server for the first time
 * needs next (where the web app and the API reference are, whether mail leaves the machine, and
 * how to create the first organization). Addresses are the public URL's: the one users reach.
 */
export function firstRunLines(config: Config, hasOrganization: boolean): Line[] {
  const base = config.publicUrl;
  const lines: Line[] = [
    { level: "info", msg: "web app", url: `${base}/` },
    { level: "info", msg: "API reference", url: `${base}/api/v1/docs`, openapi: `${base}/api/v1/openapi.json` },
    config.smtpUrl
      ? { level: "info", msg: "mail goes out over SMTP", smtp: smtpServer(config.smtpUrl), from: config.mailFrom }
      : { level: "info", msg: "no SMTP: mails wait in the outbox, see `suite mail list` (set SUITE_SMTP_URL to send them)" },
  ];
  if (!hasOrganization) {
    const cli = "`suite tenant create --name N --subdomain S --admin-email E` (the password at its prompt, or from SUITE_NEW_PASSWORD or stdin)";
    lines.push({
      level: "info",
      msg: config.signup === "open" ? `no organization yet: create one at ${base}/ or with ${cli}` : `no organization yet, and signup is closed: create one with ${cli}`,
    });
  }
  return lines;
}
