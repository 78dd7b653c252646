import type { EventRow, EventsStore } from "./repo";

/** What a stream hands the bus: the last seq it has taken, and where the bus puts new events. */
export interface Subscriber {
  last: number;
  /** True while the stream reads its own backlog (a resume): the bus leaves it alone meanwhile. */
  catchingUp: boolean;
  take(rows: EventRow[]): void;
}

interface Channel {
  last: number;
  subs: Set<Subscriber>;
  reading: boolean;
  again: boolean;
}

const BATCH = 200;

/**
 * One channel per organization with open streams in this process: a notice of a committed event
 * (the store's watch: in-process on SQLite, LISTEN/NOTIFY on PostgreSQL) makes the channel read
 * the new rows once and hand them to each of its streams. Nothing of the log is held: a channel
 * keeps its last seq, a stream its own.
 */
export function createEventsBus(store: EventsStore) {
  const channels = new Map<string, Channel>();

  async function pump(tenantId: string, ch: Channel): Promise<void> {
    if (ch.reading) {
      ch.again = true;
      return;
    }
    ch.reading = true;
    try {
      for (;;) {
        ch.again = false;
        const rows = await store.since(tenantId, ch.last, BATCH);
        if (rows.length > 0) {
          ch.last = rows.at(-1)!.seq;
          for (const s of ch.subs) if (!s.catchingUp) s.take(rows);
        }
        if (rows.length < BATCH && !ch.again) break;
      }
    } catch {
      // The database did not answer: the next notice (or a stream's heartbeat) tries again.
    } finally {
      ch.reading = false;
    }
  }

  return {
    /** A committed event's notice. */
    committed(tenantId: string, seq: number): void {
      const ch = channels.get(tenantId);
      if (ch && seq > ch.last) void pump(tenantId, ch);
    },
    /** Notices may have been lost (the listening connection came back): every channel reads again. */
    resync(): void {
      for (const [t, ch] of channels) void pump(t, ch);
    },
    /**
     * Adds a stream and brings it up to date from the table (its own backlog after `sub.last`),
     * then hands it over to the channel. Answers the function that removes it.
     */
    async join(tenantId: string, sub: Subscriber): Promise<() => void> {
      let ch = channels.get(tenantId);
      if (!ch) channels.set(tenantId, (ch = { last: sub.last, subs: new Set(), reading: false, again: false }));
      sub.catchingUp = true;
      ch.subs.add(sub);
      const leave = () => {
        ch.subs.delete(sub);
        if (ch.subs.size === 0 && channels.get(tenantId) === ch) channels.delete(tenantId);
      };
      try {
        for (;;) {
          const rows = await store.since(tenantId, sub.last, BATCH);
          if (rows.length > 0) sub.take(rows);
          // Checked in the same turn as the bus delivers: past the channel's last, the channel's
          // next reads bring every later row.
          if (rows.length < BATCH && sub.last >= ch.last) break;
        }
      } catch (e) {
        leave();
        throw e;
      }
      sub.catchingUp = false;
      return leave;
    },
    /** How many organizations and streams are open in this process (tests, metrics). */
    size: () => ({ channels: channels.size, streams: [...channels.values()].reduce((n, c) => n + c.subs.size, 0) }),
  };
}

export type EventsBus = ReturnType<typeof createEventsBus>;
