/**
 * The bulk seed's counters counted on a thread of their own (src/db/seed-tally.ts): the same rows,
 * organization by organization, as counting on the seed's own thread. (The counters against the
 * deals' texts after a whole bulk seed: tests/crm/search-grams and search-buckets.)
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { type SeedTally, openSeedTally } from "../../src/db/seed-tally";

const TABLES = `CREATE TABLE deal_gram_counts (tenant_id TEXT, gram TEXT, stage TEXT, assignee TEXT, n INTEGER, PRIMARY KEY (tenant_id, gram, stage, assignee));
  CREATE TABLE deal_key_grams (tenant_id TEXT, ord TEXT, gram TEXT, bucket TEXT, n INTEGER, PRIMARY KEY (tenant_id, ord, gram, bucket))`;

/** Deterministic deals with what the counters must survive: astral characters, newlines, no contact, no assignee, short keys. */
function deals(seed: number, n: number): Array<[string, string | null, string, string, string, string | null]> {
  let x = seed;
  const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0);
  const words = ["Managed services", "Renewal", "Ünïcode", "𝒜stral deal", "ion", "ati", "Q3", "x", "Ops\nsupport", "naïve café"];
  const pick = () => words[next() % words.length]!;
  return Array.from({ length: n }, () => {
    const title = `${pick()} ${pick()}`;
    const account = pick();
    const contact = next() % 4 === 0 ? null : pick();
    const text = `${title}\n${account}${contact === null ? "" : `\n${contact}`}`.toLowerCase();
    return [["lead", "won", "lost"][next() % 3]!, next() % 3 === 0 ? null : `u${next() % 5}`, text, title.toLowerCase(), account.toLowerCase(), contact?.toLowerCase() ?? null];
  });
}

function countInto(tally: SeedTally): Database {
  const db = new Database(":memory:");
  db.run(TABLES);
  for (const [i, tenant] of ["t1", "t2"].entries()) {
    for (const d of deals(i + 1, 6000)) tally.add(...d);
    tally.end(tenant);
  }
  tally.write(db);
  tally.close();
  return db;
}

const rows = (db: Database) => ({
  grams: db.query("SELECT * FROM deal_gram_counts ORDER BY tenant_id, gram, stage, assignee").all(),
  keys: db.query("SELECT * FROM deal_key_grams ORDER BY tenant_id, ord, gram, bucket").all(),
});

describe("the bulk seed's counting thread", () => {
  test("starts from source (and from the executable: scripts/build.ts lists its module), and counts exactly what the seed's own thread counts, one organization after another", () => {
    const threaded = openSeedTally();
    expect(threaded.threaded).toBe(true);
    const inThread = openSeedTally({ thread: false });
    expect(inThread.threaded).toBe(false);
    const a = rows(countInto(threaded));
    const b = rows(countInto(inThread));
    expect(a.grams.length).toBeGreaterThan(1000);
    expect(a.keys.length).toBeGreaterThan(1000);
    expect(a).toEqual(b);
    // The second organization was counted from nothing (end starts over), not on top of the first.
    const t2 = countInto(openSeedTally({ thread: false }));
    const only = new Database(":memory:");
    only.run(TABLES);
    const fresh = openSeedTally({ thread: false });
    for (const d of deals(2, 6000)) fresh.add(...d);
    fresh.end("t2");
    fresh.write(only);
    expect(t2.query("SELECT gram, stage, assignee, n FROM deal_gram_counts WHERE tenant_id = 't2' ORDER BY 1, 2, 3").all()).toEqual(
      only.query("SELECT gram, stage, assignee, n FROM deal_gram_counts ORDER BY 1, 2, 3").all(),
    );
  });
});
