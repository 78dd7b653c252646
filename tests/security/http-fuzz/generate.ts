/**
 * Raw HTTP/1.x requests, as bytes, for the HTTP-layer fuzz (issue 13): request lines, methods,
 * versions, Host forms, header names and values, bodies and framing that a well-behaved client
 * never sends. Seeded: the same seed gives the same requests.
 */

/** mulberry32: small, fast, and enough for choosing among cases. */
export function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const chance = (p: number) => next() < p;
  return { next, int, pick, chance };
}
export type Rng = ReturnType<typeof rng>;

/** One connection's worth of bytes, and what the sender does with it. */
export interface FuzzCase {
  bytes: Uint8Array;
  /** How many requests the bytes hold (pipelining puts several on one connection). */
  requests: number;
  /** Close right after writing (or after writing only part of the bytes) without waiting. */
  closeEarly: boolean;
  /** What kind of case this is, for the printed summary. */
  kind: string;
}

const enc = new TextEncoder();
/** Latin-1 bytes of a string (code points above 0xff become their UTF-8 bytes). */
const bytesOf = (s: string): Uint8Array => {
  const out: number[] = [];
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c <= 0xff) out.push(c);
    else out.push(...enc.encode(ch));
  }
  return Uint8Array.from(out);
};

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;
const ODD_METHODS = ["TRACE", "CONNECT", "PROPFIND", "get", "Post", "G ET", "", "GET\u0000", "\u00e9T", "X".repeat(300), "PRI", "M-SEARCH", "BREW", "\u0001GET"];

const PATHS = [
  "/api/v1/health",
  "/api/v1/auth/login",
  "/api/v1/auth/signup",
  "/api/v1/auth/refresh",
  "/api/v1/auth/me",
  "/api/v1/auth/sessions",
  "/api/v1/auth/sessions/revoke-others",
  "/api/v1/auth/logout",
  "/api/v1/auth/magic-verify",
  "/api/v1/auth/2fa/verify",
  "/api/v1/crm/deals",
  "/api/v1/crm/deals/deal_123",
  "/api/v1/crm/accounts?search=%00&limit=abc",
  "/api/v1/crm/contacts/../../etc/passwd",
  "/api/v1/users",
  "/api/v1/users/invitations",
  "/api/v1/openapi.json",
  "/api/v1/docs",
  "/api/v1/docs/init.js",
  "/nowhere",
  "/",
];
const ODD_TARGETS = [
  "*",
  "",
  "//api/v1/health",
  "/api/v1/health?",
  "/api/v1/health#frag",
  "/api/v1/health?token=%zz&%%",
  "/api/v1/%00/health",
  "/api/v1/health/%2e%2e/%2e%2e/",
  "/api/v1/\u00e4\u00f6\u00fc",
  "/api/v1/\u2603",
  "http://acme.localhost/api/v1/health",
  "http://[::1]:8000/api/v1/health",
  "https://evil.example/api/v1/auth/me",
  "http://x:99999999/api/v1/health",
  "acme.localhost:443",
  "api/v1/health",
  "\\api\\v1\\health",
  "/api/v1/crm/deals?stage=a&stage=b&stage=" + "c".repeat(5000),
  "/" + "a/".repeat(2000),
  "/api/v1/health?" + "x=1&".repeat(3000),
];
const VERSIONS = ["HTTP/1.1", "HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/1.0"] as const;
const ODD_VERSIONS = [null, "HTTP/0.9", "HTTP/2", "HTTP/2.0", "HTTP/3", "HTTP/1.2", "HTTP/1.x", "http/1.1", "HTTP/11", "HTTP/ 1.1", "HTTP/1.1 extra", "FOO/1.1", "HTTP/", "HTTP/1.1\u0000", "HTTP/9.9"];

/** Every Host form the issue lists, and more; null sends no Host header at all. */
const HOSTS: Array<string | null> = [
  null,
  "",
  " ",
  "a b",
  "x:99999999",
  "localhost:-1",
  "localhost:",
  ":8000",
  "[::1]:8000",
  "[::1]",
  "[::1",
  "::1",
  "[fe80::1%25eth0]",
  "localhost.",
  "acme.localhost.",
  "acme.localhost..",
  ".localhost",
  "ACME.LOCALHOST",
  "\u00e4cme.localhost",
  "xn--cme-2na.localhost",
  "\u2603.localhost",
  "acme.localhost\u0001",
  "acme.localhost\t",
  "user@acme.localhost",
  "acme.localhost/path",
  "acme.localhost?x",
  "127.0.0.1",
  "127.0.0.1:0",
  "999.999.999.999",
  "a".repeat(300) + ".localhost",
  "b".repeat(9000),
  "evil.example",
  "localhost",
  "acme.localhost",
  "acme.localhost:8000",
];

const HEADER_NAMES = [
  "X-Tenant",
  "X-Request-Id",
  "Authorization",
  "Cookie",
  "Origin",
  "Referer",
  "Sec-Fetch-Site",
  "X-Forwarded-For",
  "User-Agent",
  "Accept-Encoding",
  "Content-Type",
  "Connection",
  "Expect",
  "Upgrade",
  "If-None-Match",
  "Range",
];
const ODD_HEADER_NAMES = ["", " X-Space", "X Space", "X-Tab\t", "X:Colon", "X-\u0000-Nul", "X-\u0001", "X-\u00e9", "(X)", "X-" + "n".repeat(10_000), "\u007f"];
const HEADER_VALUES = [
  "",
  " ",
  "acme",
  "evil",
  "Bearer ",
  "Bearer junk.junk.junk",
  "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",
  "Basic Zm9vOmJhcg==",
  "svc_session=junk; svc_refresh=junk",
  "svc_session=; svc_session=a",
  "http://evil.localhost",
  "null",
  "cross-site",
  "1.2.3.4, junk",
  "[::1]:80",
  "application/json",
  "text/plain",
  "multipart/form-data; boundary=",
  "gzip, br, zstd",
  "close",
  "keep-alive",
  "100-continue",
  "h2c",
  "websocket",
  "bytes=0-1,2-3",
  "x".repeat(8_000),
  "\u00e4\u00f6\u00fc",
  "\u2603",
  "a\u0000b",
  "a\u0001b\u007f",
  "a\rb",
  "a\nb",
  "trace-\u0000",
  "../../etc/passwd",
  "' OR 1=1 --",
];

const BODIES = [
  "",
  "{}",
  "null",
  '{"email":"fuzz@http.test","password":"not a real secret 1"}',
  '{"email":',
  "{oops",
  "[1,2,3]",
  '"string"',
  "\u0000\u0001\u0002",
  "\u00ff\u00fe",
  "a=b&c=d",
  "[".repeat(200),
  '{"x":"' + "y".repeat(3000) + '"}',
];

const CRLF = "\r\n";

interface Parts {
  method: string;
  target: string;
  version: string | null;
  headers: Array<[string, string]>;
  body: string;
  eol: string;
  framing: "length" | "chunked" | "none" | "conflict";
}

/** Mostly values a client could send (the first 25), so that most requests reach our code. */
function headerValue(r: Rng): string {
  return r.chance(0.7) ? r.pick(HEADER_VALUES.slice(0, 25)) : r.pick(HEADER_VALUES);
}

function parts(r: Rng): Parts {
  const odd = r.chance(0.25);
  const method = odd && r.chance(0.3) ? r.pick(ODD_METHODS) : r.pick(METHODS);
  const target = odd && r.chance(0.4) ? r.pick(ODD_TARGETS) : r.pick(PATHS);
  const version = odd && r.chance(0.35) ? r.pick(ODD_VERSIONS) : r.pick(VERSIONS);
  const headers: Array<[string, string]> = [];
  const host = r.chance(0.45) ? r.pick(HOSTS) : r.pick(["localhost", "acme.localhost", "127.0.0.1:8000"]);
  if (host !== null) headers.push(["Host", host]);
  if (r.chance(0.08)) headers.push(["Host", r.pick(HOSTS) ?? "localhost"]); // duplicated Host
  const extra = r.chance(0.05) ? 100 + r.int(200) : r.int(5);
  for (let i = 0; i < extra; i++) {
    const name = r.chance(0.12) ? r.pick(ODD_HEADER_NAMES) : r.pick(HEADER_NAMES);
    headers.push([name, headerValue(r)]);
  }
  if (r.chance(0.03)) headers.push(["X-Big", "z".repeat(70_000)]); // oversized header
  const body = r.chance(0.5) ? r.pick(BODIES) : "";
  if (body && r.chance(0.8)) headers.push(["Content-Type", r.chance(0.7) ? "application/json" : r.pick(HEADER_VALUES)]);
  const framing = r.pick(["length", "length", "length", "chunked", "none", "conflict"] as const);
  const eol = r.chance(0.95) ? CRLF : r.pick(["\n", "\r", "\n\r", CRLF + " "]);
  return { method, target, version, headers, body, eol, framing };
}

/** How the body travels: a length, chunks (valid or not), nothing, or framing that disagrees. */
function frame(r: Rng, p: Parts): { head: Array<[string, string]>; payload: string } {
  const len = bytesOf(p.body).length;
  switch (p.framing) {
    case "length": {
      const declared = r.chance(0.85) ? String(len) : r.pick([String(len + 10), String(Math.max(0, len - 1)), "-1", "abc", "1e3", "0x10", " 5", "99999999999999999999", String(2 * 1024 * 1024), ""]);
      return { head: [["Content-Length", declared]], payload: p.body };
    }
    case "chunked": {
      const size = len.toString(16);
      const chunks = r.pick([
        `${size}${CRLF}${p.body}${CRLF}0${CRLF}${CRLF}`,
        `${size};ext=1${CRLF}${p.body}${CRLF}0${CRLF}X-Trailer: y${CRLF}${CRLF}`,
        `zz${CRLF}${p.body}${CRLF}0${CRLF}${CRLF}`,
        `${size}${CRLF}${p.body}`, // truncated: no last chunk
        `ffffffffffffffff${CRLF}${p.body}${CRLF}`,
        `-1${CRLF}${CRLF}`,
        `${size}\n${p.body}\n0\n\n`,
        `0${CRLF}${CRLF}${p.body}`, // body after the last chunk: smuggling attempt
      ]);
      const te = r.pick(["chunked", "chunked", "Chunked", "gzip, chunked", "chunked, gzip", "identity", " chunked", "chunked\u0000"]);
      return { head: [["Transfer-Encoding", te]], payload: chunks };
    }
    case "conflict": {
      const head: Array<[string, string]> = r.pick([
        [["Content-Length", String(len)], ["Content-Length", String(len + 1)]],
        [["Content-Length", `${len}, ${len + 1}`]],
        [["Content-Length", String(len)], ["Transfer-Encoding", "chunked"]],
        [["Transfer-Encoding", "chunked"], ["Content-Length", "3"]],
        [["Content-Length", String(len)], ["Content-Length", String(len)]],
        [["Transfer-Encoding", "chunked"], ["Transfer-Encoding", "identity"]],
      ]);
      return { head, payload: p.body };
    }
    default:
      return { head: [], payload: p.body };
  }
}

function request(r: Rng): string {
  const p = parts(r);
  const { head, payload } = frame(r, p);
  const line = p.version === null ? `${p.method} ${p.target}` : `${p.method} ${p.target} ${p.version}`;
  // obs-fold: a header continued on the next line (RFC 9112 §5.2 says reject or replace).
  const fold = r.chance(0.04) ? `X-Folded: a${p.eol} b${p.eol}` : "";
  const fields = [...p.headers, ...head].map(([k, v]) => `${k}: ${v}${p.eol}`).join("");
  // An HTTP/0.9 request is the bare line.
  if (p.version === null && r.chance(0.5)) return `${line}${p.eol}`;
  return `${line}${p.eol}${fields}${fold}${p.eol}${payload}`;
}

/** One fuzz case: one request, several pipelined, or one cut short; sometimes pure noise. */
export function fuzzCase(r: Rng): FuzzCase {
  const roll = r.next();
  if (roll < 0.04) {
    const noise = Uint8Array.from({ length: 1 + r.int(2000) }, () => r.int(256));
    return { bytes: noise, requests: 1, closeEarly: r.chance(0.5), kind: "noise" };
  }
  if (roll < 0.06) {
    // The HTTP/2 connection preface, and an h2c upgrade.
    const h2 = r.chance(0.5) ? `PRI * HTTP/2.0${CRLF}${CRLF}SM${CRLF}${CRLF}\u0000\u0000\u0000\u0004\u0000\u0000\u0000\u0000\u0000` : `GET /api/v1/health HTTP/1.1${CRLF}Host: localhost${CRLF}Connection: Upgrade, HTTP2-Settings${CRLF}Upgrade: h2c${CRLF}HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA${CRLF}${CRLF}`;
    return { bytes: bytesOf(h2), requests: 1, closeEarly: false, kind: "http2" };
  }
  if (roll < 0.2) {
    const n = 2 + r.int(4);
    const text = Array.from({ length: n }, () => request(r)).join("");
    return { bytes: bytesOf(text), requests: n, closeEarly: r.chance(0.2), kind: "pipelined" };
  }
  const bytes = bytesOf(request(r));
  if (roll < 0.32) {
    // Cut anywhere (mid-line, mid-header, mid-body), then close.
    return { bytes: bytes.slice(0, 1 + r.int(bytes.length)), requests: 1, closeEarly: true, kind: "truncated" };
  }
  return { bytes, requests: 1, closeEarly: r.chance(0.05), kind: "single" };
}
