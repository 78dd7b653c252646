import { t, type Static } from "elysia";
import { SINGLE_LINE_PATTERN } from "../kernel/validation";
import { ViewQuery } from "./views-model";

/** Deals named by id in one bulk change's body; more are chosen by a filter. */
export const MAX_BULK_IDS = 1_000;

const Id = t.String({ minLength: 1, maxLength: 64 });

/**
 * POST /api/v1/crm/deals/bulk: the deals (`ids`, or `filter`: the deal list's parameters as an
 * object, read by the list's own reader, so it chooses exactly the deals the list shows) and
 * what to do (`set` a stage and/or an assignee, or `delete`). Which of each is given is checked
 * by the route (exactly one of ids and filter, of set and delete).
 */
export const BulkRequest = t.Object(
  {
    ids: t.Optional(t.Array(Id, { minItems: 1, maxItems: MAX_BULK_IDS, description: `At most ${MAX_BULK_IDS} deal ids; more deals are chosen by a filter` })),
    filter: t.Optional(ViewQuery),
    set: t.Optional(
      t.Object(
        {
          stage: t.Optional(t.String({ minLength: 1, maxLength: 50, pattern: SINGLE_LINE_PATTERN })),
          assigned_to: t.Optional(t.Nullable(Id, { description: "A member's id; null: nobody" })),
        },
        { additionalProperties: false },
      ),
    ),
    delete: t.Optional(t.Literal(true)),
  },
  { additionalProperties: false },
);
export type BulkRequest = Static<typeof BulkRequest>;
