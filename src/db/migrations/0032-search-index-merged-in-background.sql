-- The deal search's full-text index merges its segments in the background, never inside a deal
-- write (src/db/fts-merge.ts): FTS5's automerge is off, the server's upkeep runs `merge` steps of
-- about 10 ms while the writer is idle, and the crisis merge (a level of that many segments merged
-- whole in the transaction that adds the last) is only a backstop for a writer with no upkeep
-- beside it. At 16 (FTS5's default) it ran inside import batches: 190-307 ms of CPU in one batch
-- of 32 deals at 200k deals. usermerge is FTS5's default, written down: the `merge` steps merge a
-- level once it holds 4 segments, as the automerge did, so a search reads as many segments as before.
INSERT INTO deals_fts (deals_fts, rank) VALUES ('automerge', 0);
INSERT INTO deals_fts (deals_fts, rank) VALUES ('crisismerge', 64);
INSERT INTO deals_fts (deals_fts, rank) VALUES ('usermerge', 4);
