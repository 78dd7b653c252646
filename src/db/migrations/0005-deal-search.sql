-- Deal search (issue 15). The filter columns by rowid now also carry search_text: a one- or
-- two-letter search (too short for the trigram index) is counted from this narrow index, read in
-- rowid order, instead of the deals' rows (about 5 times fewer pages); a rare term's matches are
-- still filtered by stage and assignee from it.
DROP INDEX deals_filters_by_seq;
CREATE INDEX deals_text_by_seq ON deals (seq, stage, assigned_to, search_text);
