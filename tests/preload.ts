import { afterAll } from "bun:test";
import { checkLedger, noteSecret } from "./security/ledger";

// The PostgreSQL run's URL carries a password (scripts/test.ts puts one in): it is a secret too.
if (process.env.SUITE_TEST_DATABASE_URL) {
  noteSecret("database password", decodeURIComponent(new URL(process.env.SUITE_TEST_DATABASE_URL).password));
}

// After the last test file: no secret any test used may be in any log output of the run.
afterAll(() => {
  const r = checkLedger();
  const kinds = Object.entries(r.byKind).map(([k, n]) => `${k} ${n}`).join(", ");
  process.stdout.write(`\nsecrets in logs (whole run): ${r.lines} log lines searched for ${r.secrets} secrets (${kinds}): ${r.hits.length} found\n`);
  if (r.hits.length > 0) throw new Error(`secrets reached the log: ${r.hits.join("; ")}`);
});
