/**
 * The bulk seed's gram counters (deal_gram_counts, deal_key_grams), tallied while its deals are
 * written with the triggers dropped. Counted on a thread of its own (tally-worker.ts) when one
 * starts: the tallies cost about 12 s of CPU a million deals, which the seed's own thread then
 * spends inserting rows and building indexes instead (both cores busy). Where no thread starts,
 * the same tallies run on the caller's thread: same rows, only slower.
 */
import { MessageChannel, Worker, receiveMessageOnPort } from "node:worker_threads";
import type { Db } from "./database";
import { GramTally, writeGramRows } from "./deal-grams";
import { KeyGramTally, writeKeyGramRows } from "./deal-key-grams";

export interface SeedTally {
  /** Whether the counting runs on a thread of its own. */
  readonly threaded: boolean;
  add(stage: string, assignee: string | null, text: string, titleKey: string, accountKey: string, contactKey: string | null): void;
  /** The organization's deals are all added: the next add starts the next organization. */
  end(tenantId: string): void;
  /**
   * Writes every ended organization's rows (inside the caller's transaction). Called once the seed
   * built its indexes: the thread sorts its rows meanwhile.
   */
  write(db: Db): void;
  close(): void;
}

/** Deals a message to the thread: small enough to keep both threads busy, large enough to cost little. */
const BATCH_DEALS = 4096;
/** How long the thread may take to load before the seed counts on its own. */
const READY_MS = 10_000;
/** How long write may wait for the thread (it may still be counting a backlog): then the seed fails and rolls back. */
const FINISH_MS = 600_000;

/**
 * The worker's module. In the compiled executable every module sits in Bun's embedded file system
 * under the root of its entry points (the repository: dist/web/entry.ts and this folder's
 * tally-worker.ts, both listed by scripts/build.ts), and import.meta.url names the executable.
 */
const workerUrl = (): URL =>
  import.meta.url.startsWith("file:///$bunfs/") ? new URL("./src/db/tally-worker.ts", import.meta.url) : new URL("./tally-worker.ts", import.meta.url);

export function openSeedTally(opts: { thread?: boolean } = {}): SeedTally {
  if (opts.thread === false) return inThread();
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  let worker: Worker;
  try {
    worker = new Worker(workerUrl(), { workerData: { reply: port2, flag }, transferList: [port2] });
  } catch {
    port1.close();
    return inThread();
  }
  // A thread that fails to load says so here; the wait below then times out and the seed counts itself.
  worker.on("error", () => {});
  if (Atomics.wait(flag, 0, 0, READY_MS) === "timed-out") {
    void worker.terminate();
    port1.close();
    return inThread();
  }
  let batch: Array<string | null> = [];
  const flush = () => {
    if (batch.length === 0) return;
    worker.postMessage({ op: "add", deals: batch });
    batch = [];
  };
  // The flag counts the thread's answers (one an ended organization), in the order they were asked.
  Atomics.store(flag, 0, 0);
  const ended: string[] = [];
  return {
    threaded: true,
    add(stage, assignee, text, titleKey, accountKey, contactKey) {
      batch.push(stage, assignee, text, titleKey, accountKey, contactKey);
      if (batch.length >= BATCH_DEALS * 6) flush();
    },
    end(tenantId) {
      flush();
      worker.postMessage({ op: "finish" });
      ended.push(tenantId);
    },
    write(db) {
      for (const [i, tenantId] of ended.entries()) {
        const deadline = Date.now() + FINISH_MS;
        for (let seen = Atomics.load(flag, 0); seen <= i; seen = Atomics.load(flag, 0)) {
          if (Date.now() > deadline) throw new Error("the seed's counting thread did not answer");
          Atomics.wait(flag, 0, seen, 1000);
        }
        const answer = receiveMessageOnPort(port1)?.message as { grams: Array<string | number>; keys: Array<string | number>; error?: undefined } | { error: string } | undefined;
        if (!answer || answer.error !== undefined) throw new Error(`the seed's counting thread failed: ${answer?.error ?? "no answer"}`);
        writeGramRows(db, tenantId, answer.grams);
        writeKeyGramRows(db, tenantId, answer.keys);
      }
      ended.length = 0;
    },
    close() {
      void worker.terminate();
      port1.close();
    },
  };
}

function inThread(): SeedTally {
  let grams = new GramTally();
  let keys = new KeyGramTally();
  const ended: Array<{ tenantId: string; grams: GramTally; keys: KeyGramTally }> = [];
  return {
    threaded: false,
    add(stage, assignee, text, titleKey, accountKey, contactKey) {
      grams.add(stage, assignee, text);
      keys.add(text, titleKey, accountKey, contactKey);
    },
    end(tenantId) {
      ended.push({ tenantId, grams, keys });
      [grams, keys] = [new GramTally(), new KeyGramTally()];
    },
    write(db) {
      for (const e of ended) {
        e.grams.write(db, e.tenantId);
        e.keys.write(db, e.tenantId);
      }
      ended.length = 0;
    },
    close() {},
  };
}
