import { type TSchema, t } from "elysia";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../kernel/paging";

// A list's page and query parameters for the API description, in Elysia's schema types (the
// paging itself, without Elysia, is src/kernel/paging.ts).

/** The schema of a page of `item`, for the API description. */
export const pageSchema = <T extends TSchema>(item: T) =>
  t.Object({ items: t.Array(item), total: t.Integer(), page: t.Integer(), size: t.Integer(), pages: t.Integer() });

/**
 * The query parameters of a list, for the API description only: they are read by QueryReader,
 * not by a route schema (see there why).
 */
export const listParameters = (extra: Array<{ name: string; description: string; schema: Record<string, unknown> }>) => [
  { name: "page", in: "query", required: false, description: "Page number, from 1", schema: { type: "integer", minimum: 1, default: 1 } },
  {
    name: "size",
    in: "query",
    required: false,
    description: "Items per page",
    schema: { type: "integer", minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
  },
  ...extra.map((p) => ({ ...p, in: "query", required: false })),
];
