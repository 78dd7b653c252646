/**
 * What each API operation takes and answers, read off the generated `paths` (schema.gen.ts, from
 * the server's OpenAPI document): the client's functions are typed by these, so a path the server
 * does not have, a query parameter it does not take or a body of the wrong shape does not compile.
 * Types only: nothing here reaches the bundle.
 */
import type { paths } from "./schema.gen";

export type Method = "get" | "post" | "put" | "patch" | "delete";

/** The paths that have an operation for `M` (the generated file marks the others `?: never`). */
export type PathsWith<M extends Method> = { [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never }[keyof paths];

/** The operation `M` of path `P`. */
export type Operation<M extends Method, P extends PathsWith<M>> = paths[P] extends { [K in M]: infer O } ? O : never;

type Params<O> = O extends { parameters: infer X } ? X : never;
type Field<T, K extends string> = T extends { [_ in K]?: infer V } ? V : never;

/** `{path}` when the path has parameters ({id} …), required. */
type PathPart<O> = [NonNullable<Field<Params<O>, "path">>] extends [never] ? { path?: never } : { path: NonNullable<Field<Params<O>, "path">> };

/** `{query}` when the operation takes one. */
type QueryPart<O> = [NonNullable<Field<Params<O>, "query">>] extends [never] ? { query?: never } : { query?: NonNullable<Field<Params<O>, "query">> };

type RequestBody<O> = NonNullable<Field<O, "requestBody">>;
/** `{body}` for a JSON body (optional where the server takes none), `{csv}` for a text/csv one. */
type BodyPart<O> = [RequestBody<O>] extends [never]
  ? { body?: never; csv?: never }
  : RequestBody<O> extends { content: { "application/json": infer B } }
    ? (O extends { requestBody: object } ? { body: B } : { body?: B }) & { csv?: never }
    : RequestBody<O> extends { content: { "text/csv": unknown } }
      ? { csv: Blob | string; body?: never }
      : never;

/** What a call of operation `M P` takes: its path parameters, query and body, each as the document says. */
export type Init<M extends Method, P extends PathsWith<M>> = PathPart<Operation<M, P>> & QueryPart<Operation<M, P>> & BodyPart<Operation<M, P>>;

/** The query parameters of `M P`. */
export type Query<M extends Method, P extends PathsWith<M>> = NonNullable<Field<Params<Operation<M, P>>, "query">>;

/** The JSON body of `M P`. */
export type Body<M extends Method, P extends PathsWith<M>> =
  RequestBody<Operation<M, P>> extends { content: { "application/json": infer B } } ? NonNullable<B> : never;

type Success = 200 | 201 | 202 | 203 | 204;
type Responses<O> = O extends { responses: infer R } ? R : never;
type JsonOf<R> = R extends { content: { "application/json": infer A } } ? A : R extends { content?: never } ? void : never;

/** The JSON answer of `M P` (a union where it has several 2xx answers; void for a 204). */
export type Answer<M extends Method, P extends PathsWith<M>> = {
  [S in keyof Responses<Operation<M, P>> & Success]: JsonOf<Responses<Operation<M, P>>[S]>;
}[keyof Responses<Operation<M, P>> & Success];

/** The POST paths that take an Idempotency-Key: the creates, sent once per form submission. */
export type CreatePaths = {
  [P in PathsWith<"post">]: "Idempotency-Key" extends keyof NonNullable<Field<Params<Operation<"post", P>>, "header">> ? P : never;
}[PathsWith<"post">];

/** The JSON body of `M P`'s answer with status `S` (a refusal: 401, 409, 422 …). */
export type Refusal<M extends Method, P extends PathsWith<M>, S extends number> = S extends keyof Responses<Operation<M, P>> ? JsonOf<Responses<Operation<M, P>>[S]> : never;
