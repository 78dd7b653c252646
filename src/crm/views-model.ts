import { t, type Static } from "elysia";
import { MAX_PAGE_SIZE, MAX_SEARCH } from "../kernel/paging";
import { NAME_PATTERN, SINGLE_LINE_PATTERN } from "../kernel/validation";
import { ActorRead, SORT_DIRS, SORT_FIELDS } from "./model";

export const VIEW_KINDS = ["table", "board"] as const;
export const MAX_VIEW_NAME = 80;
/** Views a member may own (personal and shared together). */
export const MAX_VIEWS_PER_USER = 50;
export const MAX_VIEW_COLUMNS = 50;

const Literals = <T extends string>(values: readonly T[]) => t.Union(values.map((v) => t.Literal(v)));

/**
 * The deal list's parameters as an object (docs/interface.md#the-deal-list): the same names,
 * types and bounds; the list's own reader checks them once more (views-routes.ts), so a view
 * holds nothing the list would refuse. No page: a view opens at its first page.
 */
export const ViewQuery = t.Object(
  {
    search: t.Optional(t.String({ maxLength: MAX_SEARCH, pattern: SINGLE_LINE_PATTERN })),
    stage: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 50, pattern: SINGLE_LINE_PATTERN }), { maxItems: 50 })),
    assigned_to: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
    unassigned: t.Optional(t.Boolean()),
    mine: t.Optional(t.Boolean()),
    sort_by: t.Optional(Literals(SORT_FIELDS)),
    sort_dir: t.Optional(Literals(SORT_DIRS)),
    size: t.Optional(t.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE })),
  },
  { additionalProperties: false },
);
export type ViewQuery = Static<typeof ViewQuery>;

const Name = t.String({ minLength: 1, maxLength: MAX_VIEW_NAME, pattern: NAME_PATTERN });
const Columns = t.Array(t.String({ minLength: 1, maxLength: 50, pattern: SINGLE_LINE_PATTERN }), { maxItems: MAX_VIEW_COLUMNS });

export const ViewCreate = t.Object({
  name: Name,
  kind: Literals(VIEW_KINDS),
  query: ViewQuery,
  columns: t.Optional(t.Nullable(Columns)),
  shared: t.Boolean(),
});
export type ViewCreate = Static<typeof ViewCreate>;

/** Any field of the create; `is_default` sets or clears the caller's own default (anyone who sees the view). */
export const ViewPatch = t.Object({
  name: t.Optional(Name),
  kind: t.Optional(Literals(VIEW_KINDS)),
  query: t.Optional(ViewQuery),
  columns: t.Optional(t.Nullable(Columns)),
  shared: t.Optional(t.Boolean()),
  is_default: t.Optional(t.Boolean()),
});
export type ViewPatch = Static<typeof ViewPatch>;

const Time = t.String({ format: "date-time" });

export const ViewRead = t.Object(
  {
    id: t.String(),
    name: t.String(),
    kind: Literals(VIEW_KINDS),
    query: ViewQuery,
    columns: t.Nullable(t.Array(t.String())),
    shared: t.Boolean(),
    owner: ActorRead,
    /** The caller's default view (each member has their own). */
    is_default: t.Boolean(),
    created_at: Time,
    updated_at: Time,
  },
  { title: "DealViewRead" },
);
export type ViewRead = Static<typeof ViewRead>;
export const ViewList = t.Array(ViewRead);
export type ViewList = Static<typeof ViewList>;
