import type { FuzzCase } from "./generate";

/** What came back on one connection: the status of each answer seen, or why there was none. */
export interface Outcome {
  statuses: string[];
  /** "answered", "closed" (by the server, without an answer), "cut" (we closed early), "timeout". */
  end: "answered" | "closed" | "cut" | "timeout";
}

const STATUS = /HTTP\/\d(?:\.\d)? (\d{3})/g;
const decoder = new TextDecoder("latin1");

/**
 * Writes the bytes on a fresh connection and reads what comes back, until the server closes,
 * every request has its answer (plus a short grace for stragglers), or `waitMs` passes. A case
 * that closes early does not wait for anything.
 */
export async function sendRaw(port: number, c: FuzzCase, waitMs: number): Promise<Outcome> {
  let text = "";
  let closed = false;
  const done = Promise.withResolvers<void>();
  let rest = c.bytes;
  const statuses = () => [...text.matchAll(STATUS)].map((m) => m[1]!);
  const pump = (s: { write(b: Uint8Array): number; end(): void }) => {
    while (rest.length > 0) {
      const n = s.write(rest);
      if (n <= 0) return;
      rest = rest.subarray(n);
    }
    if (c.closeEarly) s.end();
  };
  let socket: Awaited<ReturnType<typeof Bun.connect>> | undefined;
  try {
    socket = await Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        open: (s) => pump(s),
        drain: (s) => pump(s),
        data(_s, chunk) {
          text += decoder.decode(chunk);
          if (statuses().length >= c.requests) setTimeout(() => done.resolve(), 5);
        },
        close() {
          closed = true;
          done.resolve();
        },
        error() {
          closed = true;
          done.resolve();
        },
      },
    });
  } catch {
    return { statuses: [], end: "closed" };
  }
  if (c.closeEarly) {
    // Give the server a moment to see the close, not to answer.
    await Promise.race([done.promise, Bun.sleep(20)]);
    socket.end();
    return { statuses: statuses(), end: "cut" };
  }
  const timedOut = await Promise.race([done.promise.then(() => false), Bun.sleep(waitMs).then(() => true)]);
  if (!closed) socket.end();
  const got = statuses();
  return { statuses: got, end: got.length > 0 ? "answered" : timedOut ? "timeout" : "closed" };
}
