import type { TestApp } from "../helpers";

export const EVENTS = "/api/v1/events";
export const STREAM = "/api/v1/events/stream";

export interface SseEvent {
  id: string;
  event: string;
  data: { id: string; type: string; organization_id: string; actor: { type: string; id: string | null }; data: Record<string, any> };
}

/** Reads a Server-Sent Events answer as it arrives: its events, comments, and whether it ended. */
export function sseReader(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let ended = false;
  let reading: Promise<void> | null = null;

  const parse = () => {
    let end: number;
    while ((end = text.indexOf("\n\n")) >= 0) {
      const block = text.slice(0, end);
      text = text.slice(end + 2);
      const fields: Record<string, string> = {};
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) comments.push(line.slice(1).trim());
        else {
          const colon = line.indexOf(":");
          fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
        }
      }
      if (fields.data !== undefined) events.push({ id: fields.id!, event: fields.event!, data: JSON.parse(fields.data) });
    }
  };
  const pump = () =>
    (reading ??= (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          ended = true;
          return;
        }
        text += decoder.decode(value, { stream: true });
        parse();
      }
    })().catch(() => void (ended = true)));

  /** Waits (up to `ms`) until `ready()` holds. */
  async function until(ready: () => boolean, ms = 3000): Promise<boolean> {
    void pump();
    const deadline = Date.now() + ms;
    while (!ready()) {
      if (Date.now() > deadline) return false;
      await Bun.sleep(10);
    }
    return true;
  }
  return {
    events,
    comments,
    get ended() {
      return ended;
    },
    until,
    /** The first `n` events, once they have arrived (throws after `ms`). */
    async take(n: number, ms = 3000): Promise<SseEvent[]> {
      if (!(await until(() => events.length >= n, ms))) throw new Error(`expected ${n} events, got ${events.length}: ${events.map((e) => e.event).join(", ")}`);
      return events.slice(0, n);
    },
    cancel: () => reader.cancel().catch(() => {}),
  };
}

/** Opens the stream with a bearer token (and a Last-Event-ID when given). */
export const openStream = (t: TestApp, token: string, lastEventId?: string) =>
  t.request("GET", STREAM, { token, headers: lastEventId ? { "last-event-id": lastEventId } : {} });
