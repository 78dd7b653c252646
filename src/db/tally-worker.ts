/**
 * The bulk seed's counting thread (src/db/seed-tally.ts starts it): both gram tallies of the deals
 * the seed writes, counted here while the seed's own thread inserts rows and builds indexes.
 * Messages: { op: "add", deals } (six values a deal, as SeedTally.add takes them), then
 * { op: "finish" }: the sorted rows go back on the reply port, the flag (answers so far) goes up
 * by one, and the tallies start again for the next organization.
 */
import { parentPort, workerData } from "node:worker_threads";
import { GramTally } from "./deal-grams";
import { KeyGramTally } from "./deal-key-grams";

type AddMessage = { op: "add"; deals: Array<string | null> };
type FinishMessage = { op: "finish" };

const { reply, flag } = workerData as { reply: MessagePort; flag: Int32Array };
let grams = new GramTally();
let keys = new KeyGramTally();

function raise(): void {
  Atomics.add(flag, 0, 1);
  Atomics.notify(flag, 0);
}

parentPort!.on("message", (m: AddMessage | FinishMessage) => {
  try {
    if (m.op === "add") {
      const d = m.deals;
      for (let i = 0; i < d.length; i += 6) {
        grams.add(d[i]!, d[i + 1] ?? null, d[i + 2]!);
        keys.add(d[i + 2]!, d[i + 3]!, d[i + 4]!, d[i + 5] ?? null);
      }
      return;
    }
    reply.postMessage({ grams: grams.sortedRows(), keys: keys.sortedRows() });
    [grams, keys] = [new GramTally(), new KeyGramTally()];
    raise();
  } catch (e) {
    reply.postMessage({ error: e instanceof Error ? e.message : String(e) });
    raise();
  }
});

// Loaded: the seed waits for this before it sends deals here rather than counting them itself.
raise();
