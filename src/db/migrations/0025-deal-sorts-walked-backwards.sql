-- ---- version 25: a nullable sort's one index serves both directions (issues 27, 28) ----

-- Every deal create and delete wrote each of the deal's 20 indexes (a create 93 pages, 1.8 ms of
-- CPU at 1M deals on a freshly seeded file, 4-5 pages for each index whose full leaf it split).
-- The four nullable sorts (close date, probability, contact, assignee) had an ascending and a
-- descending index so that their deals without a key come last both ways; the list now reads a
-- descending page by walking the ascending index backwards, over the keyed entries and then over
-- the keyless ones (src/stores/sqlite/deals-list-request.ts), and the descending ones go.
DROP INDEX deals_by_close_desc;
DROP INDEX deals_by_probability_desc;
DROP INDEX deals_by_contact_desc;
DROP INDEX deals_by_assignee_desc;
