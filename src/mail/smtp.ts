import nodemailer from "nodemailer";

/** What delivers one message: a nodemailer transport, or a stand-in in tests. */
export interface MailTransport {
  sendMail(message: { from: string; to: string; subject: string; text: string; html: string }): Promise<unknown>;
  close?(): void;
}

/**
 * A transport for SUITE_SMTP_URL (smtp:// upgrades with STARTTLS when offered; smtps:// is TLS
 * from the start; credentials ride in the URL). Timeouts are well inside the sender's lease,
 * so a hung server cannot make two senders deliver the same row.
 */
export function createSmtpTransport(url: string): MailTransport {
  // One kept-alive connection: the sender sends one mail at a time, and a new SMTP session
  // (greeting, EHLO, maybe TLS and AUTH) costs far more than the message itself.
  const transport = nodemailer.createTransport({
    url,
    pool: true,
    maxConnections: 1,
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 60_000,
  } as Parameters<typeof nodemailer.createTransport>[0]);
  return {
    sendMail: (m) => transport.sendMail(m),
    close: () => transport.close(),
  };
}

/** The secrets inside an SMTP URL: its user:password pair, raw and decoded. */
export function smtpSecrets(url: string | null): string[] {
  if (!url) return [];
  try {
    const u = new URL(url);
    return [u.password, decodeURIComponent(u.password), u.username && u.password ? `${u.username}:${u.password}` : ""].filter((s) => s.length >= 3);
  } catch {
    return [];
  }
}

const MAX_ERROR = 300;

/**
 * An SMTP failure as one short line fit for a log and the outbox's last_error: the reply code
 * and message, never credentials (a URL's user:password, a configured password, an AUTH line).
 */
export function scrubSmtpError(e: unknown, secrets: string[]): string {
  const err = e as { code?: unknown; responseCode?: unknown; message?: unknown };
  let text = typeof err?.message === "string" ? err.message : String(e);
  text = text.replace(/\b(smtps?:\/\/)[^@\s/]*@/gi, "$1***@");
  text = text.replace(/\bAUTH\s+\S+\s+\S+/gi, "AUTH ***");
  for (const s of secrets) text = text.split(s).join("***");
  text = text.replace(/\s+/g, " ").trim();
  const code = typeof err?.code === "string" ? `${err.code} ` : "";
  const reply = typeof err?.responseCode === "number" ? `${err.responseCode} ` : "";
  const line = `${code}${reply}${text}`;
  return line.length > MAX_ERROR ? `${line.slice(0, MAX_ERROR)}…` : line;
}
