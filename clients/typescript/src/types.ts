// Types of requests and answers, derived from the generated schema so that
// a change of the OpenAPI document changes them, and a caller that no longer
// fits fails to compile.
import type { components, paths } from "./schema.js";

export type { components, paths };
export type Schemas = components["schemas"];

export type Method = "get" | "post" | "put" | "patch" | "delete";

/** The paths that have an operation for method M. */
export type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P][M] extends { responses: unknown } ? P : never;
}[keyof paths];

export type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;

type SuccessStatus = 200 | 201 | 202;
type JsonContent<R> = R extends { content: { "application/json": infer Body } } ? Body : never;

/** The JSON of an operation's successful answer. */
export type Answer<O> = O extends { responses: infer R } ? JsonContent<R[keyof R & SuccessStatus]> : never;

type Parameters<O> = O extends { parameters: infer Params } ? Params : {};

// An operation without path parameters says `path?: never`, which a
// required `path` does not match.
type PathPart<O> = Parameters<O> extends { path: infer Path } ? { path: Path } : {};

type QueryPart<O> =
  Parameters<O> extends { query: infer Query }
    ? { query: Query }
    : Parameters<O> extends { query?: infer Query }
      ? [NonNullable<Query>] extends [never]
        ? {}
        : { query?: NonNullable<Query> }
      : {};

type BodyPart<O> = O extends { requestBody: { content: { "application/json": infer Body } } }
  ? { body: Body }
  : O extends { requestBody?: { content: { "application/json": infer Body } } }
    ? { body?: Body }
    : {};

/** What a request may carry besides its method and path. */
export type RequestOptions<O> = PathPart<O> &
  QueryPart<O> &
  BodyPart<O> & {
    /** Cancels the request, e.g. when a React component unmounts. */
    signal?: AbortSignal;
  };

/** The options argument: optional when nothing in it is required. */
export type OptionsArg<O> = {} extends RequestOptions<O>
  ? [options?: RequestOptions<O>]
  : [options: RequestOptions<O>];

export type PostedTurn = Schemas["PostedTurn"];
export type ConversationRecord = Schemas["ConversationRecord"];
export type Learner = Schemas["Learner"];
export type LearnerMemory = Schemas["LearnerMemory"];
export type PendingAction = Schemas["PendingAction"];
export type ToolResult = Schemas["ToolResult"];
