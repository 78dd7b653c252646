/**
 * Live updates: one EventSource on the organization's event stream for the whole page, opened
 * while a screen listens and closed when none does. Screens subscribe to the event types they
 * show (by prefix: "deal.", "account."…). Their own user's changes come too: the same person in
 * another tab (or on their phone) changed it, and a quiet reload of what this tab just saved costs
 * one read. When the stream drops (an expired access token ends it), the session is
 * refreshed and the stream reopened from the last event received, so nothing is missed.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { type LiveEvent, refreshSession } from "../api/client";
import { EVENT_TYPES } from "../../src/events/repo";

type Listener = { prefixes: readonly string[]; on: (e: LiveEvent) => void };

const listeners = new Set<Listener>();
let source: EventSource | null = null;
let lastId: string | null = null;
let retry: ReturnType<typeof setTimeout> | undefined;
let failures = 0;

function deliver(e: LiveEvent): void {
  lastId = e.id;
  for (const l of listeners) if (l.prefixes.some((p) => e.type.startsWith(p))) l.on(e);
}

function open(): void {
  if (source || listeners.size === 0 || typeof EventSource === "undefined") return;
  const url = `/api/v1/events/stream${lastId ? `?last_event_id=${encodeURIComponent(lastId)}` : ""}`;
  const s = new EventSource(url, { withCredentials: true });
  source = s;
  s.onopen = () => void (failures = 0);
  s.onmessage = null;
  // Every event comes with its type as the SSE event name; one handler reads them all.
  const handle = (m: MessageEvent<string>) => {
    try {
      deliver(JSON.parse(m.data) as LiveEvent);
    } catch {
      // Not an event of ours: ignored.
    }
  };
  for (const type of KNOWN_TYPES) s.addEventListener(type, handle as EventListener);
  s.onerror = () => {
    // The browser retries by itself while the stream answers 200; a refusal (401) closes it.
    if (s.readyState !== EventSource.CLOSED) return;
    source = null;
    failures++;
    clearTimeout(retry);
    retry = setTimeout(async () => {
      if (failures > 1) await refreshSession().catch(() => false);
      open();
    }, Math.min(30_000, 1000 * 2 ** Math.min(failures, 5)));
  };
}

function close(): void {
  clearTimeout(retry);
  source?.close();
  source = null;
}

/**
 * The event types a screen shows: the server's list (src/events/repo.ts) but the admins' sign-in
 * and session events, which no screen reloads on. An EventSource hears a named event only through
 * its own listener.
 */
export const KNOWN_TYPES = EVENT_TYPES.filter((t) => !t.startsWith("user.") && !t.startsWith("session."));

/**
 * Calls `on` for each event whose type starts with one of `prefixes`, while the calling screen is
 * shown and someone is signed in (`userId`: the stream follows the session).
 */
export function useLiveEvents(prefixes: readonly string[], userId: string | null | undefined, on: (e: LiveEvent) => void): void {
  const onRef = useRef(on);
  onRef.current = on;
  const key = prefixes.join(",");
  useEffect(() => {
    if (!userId) return;
    const l: Listener = { prefixes, on: (e) => onRef.current(e) };
    listeners.add(l);
    open();
    return () => {
      listeners.delete(l);
      if (listeners.size === 0) close();
    };
  }, [key, userId]);
}

/** Rows another person just changed (marked for a few seconds) or deleted (greyed until the list reloads without them). */
export function useLiveMarks(): { mark: (id: string, kind: "changed" | "deleted") => void; classOf: (id: string) => string } {
  const [marks, setMarks] = useState<ReadonlyMap<string, "changed" | "deleted">>(new Map());
  const timers = useRef(new Set<ReturnType<typeof setTimeout>>());
  useEffect(() => () => timers.current.forEach(clearTimeout), []);
  return {
    mark(id, kind) {
      setMarks((m) => new Map(m).set(id, kind));
      if (kind === "deleted") return;
      const t = setTimeout(() => {
        timers.current.delete(t);
        setMarks((m) => {
          if (m.get(id) !== "changed") return m;
          const n = new Map(m);
          n.delete(id);
          return n;
        });
      }, 4000);
      timers.current.add(t);
    },
    classOf: (id) => (marks.has(id) ? `live-${marks.get(id)}` : ""),
  };
}

/**
 * Another person's change to what a list shows: the list reloads quietly (`quiet` until its next
 * answer: no dimming; scroll, filters and an open form stay), a changed record of `kind` ("deal",
 * "account") marked for a moment, a deleted one greyed until it goes. `also` sees each event first.
 */
export function useQuietReload(
  kind: string,
  prefixes: readonly string[],
  userId: string | null | undefined,
  list: { data: unknown; reload: () => void },
  also?: (e: LiveEvent) => void,
): { marks: ReturnType<typeof useLiveMarks>; quiet: boolean } {
  const marks = useLiveMarks();
  const [quiet, setQuiet] = useState(false);
  useEffect(() => setQuiet(false), [list.data]);
  useLiveEvents(prefixes, userId, (e) => {
    also?.(e);
    if (e.type === `${kind}.deleted`) return marks.mark(String(e.data.id), "deleted");
    if (e.type.startsWith(`${kind}.`)) marks.mark(String(e.data.id), "changed");
    setQuiet(true);
    list.reload();
  });
  return { marks, quiet };
}
