import { createHash } from "node:crypto";
import { createApp } from "../../../src/app";
import { loadConfig } from "../../../src/config";
import { FUZZ_METRICS_TOKEN } from "./values";
import { type ContextOptions, createContext } from "../../../src/context";
import { openDatabase } from "../../../src/db/database";
import type { PasswordHasher } from "../../../src/security/passwords";
import { LIMITS, type Limits } from "../../../src/security/rate-limit";

/**
 * A stand-in for argon2: the fuzz sends thousands of well-formed passwords, and at ~30 ms a hash
 * argon2 alone would take minutes. What it checks is the same: right password or not.
 */
export function cheapHasher(): PasswordHasher {
  const digest = (p: string) => `sha256$${createHash("sha256").update(p).digest("hex")}`;
  return {
    hash: async (p: string) => digest(p),
    verify: async (p: string, h: string) => digest(p) === h,
    verifyNobody: async () => false as const,
    warm: () => {},
  };
}

/** Every rate limit (docs/interface.md#limits) raised out of reach, so requests reach validation instead of 429. */
export const RAISED_LIMITS = Object.fromEntries(
  Object.entries(LIMITS).map(([k, l]) => [k, { ...l, max: 1_000_000_000 }]),
) as unknown as Partial<Limits>;

/** A fixed clock: sessions are never touched (last_used_at) and windows never roll over mid-run. */
export const FUZZ_NOW = Date.UTC(2030, 0, 1);

export interface Sent {
  method: string;
  /** Path and query, already encoded as they go on the wire. */
  target: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** Sent as a stream of small chunks (no Content-Length), as a chunked upload arrives. */
  chunked?: boolean;
}

const chunks = (body: string | Uint8Array) => {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  return new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < bytes.length; i += 16_384) c.enqueue(bytes.subarray(i, i + 16_384));
      c.close();
    },
  });
};

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** An app on an in-memory database with a cheap hasher; keeps the error-level log lines. */
export function fuzzApp(limits: ContextOptions["limits"] = RAISED_LIMITS) {
  // Loopback issuers allowed: the world's identity provider is a closed loopback port (fuzz/world.ts).
  // The operator's metrics on, so GET /api/v1/metrics is fuzzed past its token check too.
  const config = loadConfig({}, { SUITE_DB: ":memory:", SUITE_OIDC_TEST_LOOPBACK: "true", SUITE_METRICS_TOKEN: FUZZ_METRICS_TOKEN });
  const errorLogs: Record<string, unknown>[] = [];
  const ctx = createContext({
    config,
    db: openDatabase(":memory:"),
    log: (line) => {
      if (line.level === "error" || line.level === "fatal") errorLogs.push(line);
    },
    now: () => FUZZ_NOW,
    limits,
    hasher: cheapHasher(),
  });
  const app = createApp(ctx);

  /** Undefined when the request cannot even be built (a header value fetch refuses). */
  function build(s: Sent): Request | undefined {
    try {
      return new Request(`http://localhost${s.target}`, { method: s.method, headers: s.headers, body: s.chunked && s.body !== undefined ? chunks(s.body) : s.body });
    } catch {
      return undefined;
    }
  }

  async function send(s: Sent): Promise<Answer | undefined> {
    const request = build(s);
    if (!request) return undefined;
    const res = await app.handle(request);
    // A live event stream never ends by itself: its first chunk (the opening comment) stands for it.
    if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
      const reader = res.body!.getReader();
      const first = await reader.read();
      await reader.cancel();
      return { status: res.status, headers: res.headers, text: first.value ? new TextDecoder().decode(first.value) : "" };
    }
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  return { app, ctx, errorLogs, send, close: () => ctx.close() };
}

export type FuzzApp = ReturnType<typeof fuzzApp>;
