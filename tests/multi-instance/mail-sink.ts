/**
 * An SMTP server for the multi-instance mail tests that tells apart what it RECEIVED (the whole
 * message arrived) from what it ACCEPTED (it answered 250 while the sender was still connected:
 * the mail is delivered). Each message is keyed by its recipient and the link inside it, so a
 * mail sent twice counts twice. With `delayMs` it waits before answering, like a slow relay, so
 * that a sender can be killed mid-send; `inFlight` counts the messages it is holding.
 */
import { SMTPServer } from "smtp-server";
import { noteSecret } from "../security/ledger";
import { parseMail } from "../mail/smtp-support";

export interface MailSink {
  url: string;
  received: Map<string, number>;
  accepted: Map<string, number>;
  /** SMTP connections seen (one pooled connection per sending instance, plus reconnects). */
  connections: Set<string>;
  inFlight(): number;
  setDelay(ms: number): void;
  close(): Promise<void>;
}

const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

export async function startMailSink(): Promise<MailSink> {
  const received = new Map<string, number>();
  const accepted = new Map<string, number>();
  const connections = new Set<string>();
  const closed = new Set<string>();
  let delayMs = 0;
  let holding = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    disableReverseLookup: true,
    logger: false,
    onConnect(session, callback) {
      connections.add(session.id);
      callback();
    },
    onClose(session) {
      closed.add(session.id);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const to = session.envelope.rcptTo.map((r) => r.address);
        const mail = parseMail(Buffer.concat(chunks).toString("utf8"), { from: "", to });
        const link = /https?:\/\/\S+/.exec(mail.text)?.[0] ?? "";
        if (link) noteSecret("mailed link", link);
        const key = `${to.join(",")} ${link}`;
        bump(received, key);
        const answer = () => {
          holding--;
          // A sender that went away before the answer never learns the mail went out.
          if (!closed.has(session.id)) bump(accepted, key);
          callback();
        };
        holding++;
        if (delayMs > 0) setTimeout(answer, delayMs);
        else answer();
      });
    },
  });
  server.on("error", () => {}); // a sender killed mid-message resets its connection: expected here
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const port = (server.server.address() as { port: number }).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    accepted,
    connections,
    inFlight: () => holding,
    setDelay: (ms) => {
      delayMs = ms;
    },
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
