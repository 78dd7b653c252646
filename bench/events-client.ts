// The load generator of `bun run bench events`, in a process of its own: opens N Server-Sent
// Events streams on raw sockets (a few bytes of state a stream here, no HTTP client on top) and
// notes when each event id reaches each stream. Speaks JSON lines on stdout:
//   {"ready": n, "failed": f}            once every stream has its first bytes (or failed)
//   {"done": {...}}                        after a line on stdin: per event id, the arrival times
// argv: host port count token,token,... tenant
export {};
const [host, portText, countText, tokensText, tenant] = process.argv.slice(2);
const port = Number(portText);
const count = Number(countText);
const tokens = tokensText!.split(",");
const now = () => performance.timeOrigin + performance.now();
const say = (o: unknown) => process.stdout.write(`${JSON.stringify(o)}\n`);

/** Arrival times (epoch ms, fractional) by event id, one per stream that got it. */
const arrivals = new Map<string, number[]>();
let connected = 0;
let failed = 0;
let statuses = new Map<string, number>();
let readySent = false;
const checkReady = () => {
  if (!readySent && connected + failed === count) {
    readySent = true;
    say({ ready: connected, failed, statuses: Object.fromEntries(statuses) });
  }
};

interface Stream {
  head: boolean;
  tail: string;
}

for (let i = 0; i < count; i++) {
  const token = tokens[i % tokens.length]!;
  const state: Stream = { head: true, tail: "" };
  await Bun.connect<Stream>({
    hostname: host!,
    port,
    data: state,
    socket: {
      open(s) {
        s.write(`GET /api/v1/events/stream HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\nX-Tenant: ${tenant}\r\nAccept: text/event-stream\r\n\r\n`);
      },
      data(s, bytes) {
        const at = now();
        let text = s.data.tail + bytes.toString();
        if (s.data.head) {
          const end = text.indexOf("\r\n\r\n");
          if (end < 0) return void (s.data.tail = text);
          const status = text.slice(9, 12);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          s.data.head = false;
          if (status === "200") connected++;
          else failed++;
          checkReady();
          text = text.slice(end + 4);
        }
        // Event ids: lines "id: N" (chunk framing lines never start with "id: ").
        let from = 0;
        for (;;) {
          const at0 = text.indexOf("id: ", from);
          if (at0 < 0) break;
          const eol = text.indexOf("\n", at0);
          if (eol < 0) break;
          if (at0 === 0 || text[at0 - 1] === "\n") {
            const id = text.slice(at0 + 4, eol).trim();
            let list = arrivals.get(id);
            if (!list) arrivals.set(id, (list = []));
            list.push(at);
          }
          from = eol + 1;
        }
        // Keep an unfinished line only.
        const last = text.lastIndexOf("\n");
        s.data.tail = last < 0 ? text : text.slice(last + 1);
      },
      close(s) {
        if (s.data.head) {
          failed++;
          checkReady();
        }
      },
      error() {},
    },
  }).catch(() => {
    failed++;
    checkReady();
  });
  // Opening in small groups: the server's accept queue stays short.
  if (i % 50 === 49) await Bun.sleep(5);
}

const cpuAtStart = process.cpuUsage();
const wallAtStart = now();
for await (const _line of console) {
  const cpu = process.cpuUsage(cpuAtStart);
  // Awaited whole before exiting (a megabyte of times: process.stdout's write would be cut short by exit).
  await Bun.write(Bun.stdout, `${JSON.stringify({ done: Object.fromEntries(arrivals), cpuMs: (cpu.user + cpu.system) / 1000, wallMs: now() - wallAtStart })}\n`);
  process.exit(0);
}
