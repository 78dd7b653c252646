import { SMTPServer } from "smtp-server";

/** One message as the test SMTP server received it, with its parts decoded. */
export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  raw: string;
}

const decodeQuotedPrintable = (s: string) =>
  Buffer.from(
    s.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
    "latin1",
  ).toString("utf8");

function decodeBody(headers: string, body: string): string {
  const enc = /content-transfer-encoding:\s*([\w-]+)/i.exec(headers)?.[1]?.toLowerCase();
  if (enc === "quoted-printable") return decodeQuotedPrintable(body);
  if (enc === "base64") return Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8");
  return body;
}

const splitHead = (part: string): [string, string] => {
  const i = part.search(/\r?\n\r?\n/);
  return i < 0 ? [part, ""] : [part.slice(0, i), part.slice(i).replace(/^\r?\n\r?\n/, "")];
};

/** Enough MIME for what nodemailer writes: a multipart/alternative of text and HTML. */
export function parseMail(raw: string, envelope: { from: string; to: string[] }): ReceivedMail {
  const [head, body] = splitHead(raw);
  const unfolded = head.replace(/\r?\n[ \t]+/g, " ");
  const subject = /^subject:\s*(.*)$/im.exec(unfolded)?.[1]?.trim() ?? "";
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(unfolded)?.[1];
  let text = "";
  let html = "";
  const parts = boundary ? body.split(`--${boundary}`).slice(1, -1) : [raw];
  for (const part of parts) {
    const [h, b] = splitHead(part.replace(/^\r?\n/, ""));
    const decoded = decodeBody(h, b.replace(/\r?\n$/, ""));
    if (/content-type:\s*text\/html/i.test(h)) html = decoded;
    else if (/content-type:\s*text\/plain/i.test(h)) text = decoded;
  }
  return { ...envelope, subject, text: text.replace(/\r\n/g, "\n"), html: html.replace(/\r\n/g, "\n"), raw };
}

export interface TestSmtp {
  url: string;
  port: number;
  received: ReceivedMail[];
  /** Refuse the next `n` messages at DATA with a temporary (451) error. */
  refuseNext(n: number): void;
  /** Resolves once `count` messages in all have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

/** A real SMTP server on 127.0.0.1, on a free port, keeping every message it accepts. */
export async function startSmtp(): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  let refusals = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    disableReverseLookup: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        if (refusals > 0) {
          refusals--;
          const err = Object.assign(new Error("Try again later"), { responseCode: 451 });
          return callback(err);
        }
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
        received.push(parseMail(Buffer.concat(chunks).toString("utf8"), { from, to: session.envelope.rcptTo.map((r) => r.address) }));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as { port: number }).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    received,
    refuseNext: (n) => void (refusals = n),
    async waitFor(count, timeoutMs = 5000) {
      const until = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > until) throw new Error(`expected ${count} mails, got ${received.length}`);
        await Bun.sleep(10);
      }
      return received;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The token of a mailed link (it rides in the fragment: #token=...). */
export const tokenOf = (link: string): string => decodeURIComponent(new URL(link).hash.replace(/^#token=/, ""));

/** The first http(s) link in a text. */
export const firstLink = (text: string): string => /https?:\/\/\S+/.exec(text)![0];
/** The mail's link that carries a token (a reset mail also names the page where identities are reviewed). */
export const tokenLink = (text: string): string => /https?:\/\/\S+#token=\S+/.exec(text)![0];
