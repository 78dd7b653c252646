/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): a valid `traceparent` from the caller
 * (a proxy, a client) is continued under a span id of ours; otherwise a new trace starts. Only the
 * trace id is logged: it joins a proxy's log lines and ours, and says nothing about the caller.
 */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

// Random bytes drawn 4 KiB at a time (one system call per 170 requests), written as hex by table:
// a trace id per request stays well under a microsecond.
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
const pool = new Uint8Array(4096);
let used = pool.length;
function randomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    crypto.getRandomValues(pool);
    used = 0;
  }
  let out = "";
  for (let i = used; i < used + bytes; i++) out += HEX[pool[i]!];
  used += bytes;
  return out;
}

export interface Trace {
  traceId: string;
  /** The answer's `traceparent`: the trace, this server's span, the caller's flags (01: sampled, when it started one). */
  header: string;
}

export function traceOf(given: string | null): Trace {
  const span = randomHex(8);
  const m = given ? TRACEPARENT.exec(given.trim()) : null;
  if (m && m[1] !== ZERO_TRACE && m[2] !== ZERO_SPAN) return { traceId: m[1]!, header: `00-${m[1]}-${span}-${m[3]}` };
  const traceId = randomHex(16);
  return { traceId, header: `00-${traceId}-${span}-00` };
}
