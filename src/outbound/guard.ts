import { lookup } from "node:dns/promises";
import type { Config } from "../config";
import { type AllowList, type Ip, allowedRange, classify, parseAllowList, parseIp, urlHost } from "./addresses";

/**
 * THE way the suite makes a request to a host someone else chose (an identity provider's issuer
 * today, webhooks later): every outbound request goes through `guardedFetch`. It resolves the
 * host, refuses it when any of its addresses is loopback, private, link-local, CGNAT, multicast,
 * unspecified or reserved (unless the operator allows it), and connects to the very address it
 * checked (no second lookup for DNS rebinding to answer differently), keeping the Host header and
 * the TLS server name (SNI and certificate check) the URL's. It follows no redirect, gives up
 * after a timeout, and reads at most `maxBytes` of the answer.
 */

/** Who is asking: each purpose may get its own exceptions (the test switch opens loopback to identity providers only). */
export type OutboundPurpose = "identity_provider" | "webhook";

/** Why a request failed, from a fixed set: never the error's own text, which may quote the remote side or scan a network. */
export const OUTBOUND_REASONS = ["refused_address", "bad_url", "unreachable", "timeout", "tls", "redirect", "too_large"] as const;
export type OutboundReason = (typeof OUTBOUND_REASONS)[number];

export class OutboundError extends Error {
  constructor(readonly reason: OutboundReason) {
    super(`outbound request failed: ${reason}`);
    this.name = "OutboundError";
  }
}

export interface OutboundOptions {
  purpose: OutboundPurpose;
  /** Whole request, lookup included; default 10 s. */
  timeoutMs?: number;
  /** The answer's body is read into memory up to this size; default 1 MiB. */
  maxBytes?: number;
}

export interface OutboundSettings {
  allow: AllowList;
  /** Purposes for which loopback addresses are allowed (the tests' identity provider runs on loopback). */
  loopbackFor: ReadonlySet<OutboundPurpose>;
  /** The resolver (tests give their own names); default: the system's, every address. */
  resolve?: (host: string) => Promise<string[]>;
  /** Extra trust for a test's own certificate authority; never set from configuration. */
  ca?: string;
}

export type GuardedFetch = (url: string | URL, init: RequestInit | undefined, o: OutboundOptions) => Promise<Response>;

export interface OutboundGuard {
  guardedFetch: GuardedFetch;
  /** Resolves and checks a URL's host without connecting: the address it would connect to. */
  check: (url: string | URL, purpose: OutboundPurpose, timeoutMs?: number) => Promise<Ip>;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_BYTES = 1 << 20;

const systemResolve = async (host: string) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** The guard the server uses: SUITE_OUTBOUND_ALLOW, and loopback for identity providers under the test switch. */
export function outboundGuardFor(config: Config, extra: Partial<OutboundSettings> = {}): OutboundGuard {
  return createOutboundGuard({
    allow: parseAllowList(config.outboundAllow ?? ""),
    loopbackFor: new Set<OutboundPurpose>(config.oidcTestLoopback ? ["identity_provider"] : []),
    ...extra,
  });
}

export function createOutboundGuard(s: OutboundSettings): OutboundGuard {
  const resolve = s.resolve ?? systemResolve;

  function permitted(ip: Ip, name: string | null, purpose: OutboundPurpose): boolean {
    const kind = classify(ip);
    if (kind === "public") return true;
    if (kind === "loopback" && s.loopbackFor.has(purpose)) return true;
    return allowedRange(s.allow, ip) || (name !== null && s.allow.names.has(name));
  }

  async function check(input: string | URL, purpose: OutboundPurpose, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<Ip> {
    let url: URL;
    try {
      url = new URL(input);
    } catch {
      throw new OutboundError("bad_url");
    }
    if ((url.protocol !== "https:" && url.protocol !== "http:") || url.username || url.password || !url.hostname) throw new OutboundError("bad_url");
    const literal = parseIp(url.hostname);
    const name = literal ? null : url.hostname.toLowerCase().replace(/\.$/, "");
    let addresses: Ip[];
    if (literal) addresses = [literal];
    else {
      let texts: string[];
      try {
        texts = await withTimeout(resolve(name!), timeoutMs);
      } catch (e) {
        throw e instanceof OutboundError ? e : new OutboundError("unreachable");
      }
      addresses = texts.map((t) => parseIp(t)).filter((ip): ip is Ip => ip !== null);
      if (addresses.length === 0) throw new OutboundError("unreachable");
    }
    // Every address, not only the first: a name may hold a public address beside a private one.
    if (!addresses.every((ip) => permitted(ip, name, purpose))) throw new OutboundError("refused_address");
    return addresses[0]!;
  }

  async function guardedFetch(input: string | URL, init: RequestInit | undefined, o: OutboundOptions): Promise<Response> {
    const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const deadline = AbortSignal.timeout(timeoutMs);
    const url = new URL(input);
    const address = await check(url, o.purpose, timeoutMs);
    // Connect to the checked address; the Host header and the TLS name stay the URL's.
    const pinned = new URL(url);
    pinned.hostname = urlHost(address);
    const headers = new Headers(init?.headers);
    headers.set("host", url.host);
    const named = parseIp(url.hostname) === null;
    const tls = url.protocol === "https:" && (named || s.ca) ? { ...(named ? { serverName: url.hostname.replace(/\.$/, "") } : {}), ...(s.ca ? { ca: s.ca } : {}) } : undefined;
    let response: Response;
    try {
      response = await fetch(pinned, {
        ...init,
        headers,
        redirect: "manual",
        signal: init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline,
        // Bun's own options: no proxy from the environment (it would do its own lookup), and the URL's name for TLS.
        proxy: false,
        ...(tls ? { tls } : {}),
      } as RequestInit);
    } catch (e) {
      throw new OutboundError(failureOf(e, deadline));
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => {});
      throw new OutboundError("redirect");
    }
    return readLimited(response, o.maxBytes ?? DEFAULT_MAX_BYTES, deadline);
  }

  return { guardedFetch, check };
}

/** The answer with its body read into memory (at most `max` bytes), so no caller can leave it unread or stream without end. */
async function readLimited(response: Response, max: number, deadline: AbortSignal): Promise<Response> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (response.body) {
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > max) {
          await reader.cancel().catch(() => {});
          throw new OutboundError("too_large");
        }
        chunks.push(value);
      }
    } catch (e) {
      throw e instanceof OutboundError ? e : new OutboundError(failureOf(e, deadline));
    }
  }
  const headers = new Headers(response.headers);
  // The body is already decoded and its length is ours now.
  headers.delete("content-encoding");
  headers.delete("content-length");
  const body = response.status === 204 || response.status === 304 ? null : Buffer.concat(chunks);
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

/** A connection failure as a reason: the timeout, a certificate problem, or anything else that kept us from the answer. */
function failureOf(e: unknown, deadline: AbortSignal): OutboundReason {
  if (deadline.aborted) return "timeout";
  const err = e as { name?: unknown; code?: unknown };
  if (err?.name === "TimeoutError" || err?.name === "AbortError") return "timeout";
  const code = typeof err?.code === "string" ? err.code : "";
  if (/TLS|CERT|SSL|SELF_SIGNED|UNABLE_TO_VERIFY|HOSTNAME_MISMATCH/i.test(code)) return "tls";
  return "unreachable";
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new OutboundError("timeout")), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
