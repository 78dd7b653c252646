/** Whether this test run is the PostgreSQL one (scripts/test.ts sets SUITE_TEST_BACKEND for it). */
export const ON_POSTGRES = process.env.SUITE_TEST_BACKEND === "postgres";

/**
 * The mail store's `enqueueInTx`, which every store that writes mail looks up at call time (on
 * SQLite `(mail, now)`, on PostgreSQL `(tx, mail, now)`): tests replace it to make the mail fail
 * inside the writing transaction.
 */
export const mailSeam = (ctx: { repos: { mail: unknown } }) => ctx.repos.mail as { enqueueInTx: (...args: unknown[]) => unknown };

/** Closes the app's database under it (SQLite file or PostgreSQL pool): an outage the app must answer, not crash on. */
export async function closeDatabase(ctx: { db?: unknown; pg?: unknown }): Promise<void> {
  const pg = ctx.pg as { close(): Promise<void> } | null | undefined;
  if (pg) await pg.close();
  else (ctx.db as { close(): void }).close();
}
