// A thin, typed client of the mentormemory API. Every type comes from the
// OpenAPI document (src/schema.ts, generated); this file only builds URLs,
// adds the Supabase access token and turns error answers into MentorError.
import { errorOf, MentorError } from "./error.js";
import { readEvents } from "./events.js";
import type {
  Answer,
  Method,
  Operation,
  OptionsArg,
  PathsWith,
  PostedTurn,
  RequestOptions,
  Schemas,
} from "./types.js";

export { MentorError } from "./error.js";
export type * from "./types.js";

/**
 * Returns the signed-in user's Supabase access token, or nothing when no one
 * is signed in (the API then answers 401). Called before every request, so a
 * refreshed token is picked up.
 */
export type TokenSource = () => string | null | undefined | Promise<string | null | undefined>;

export interface MentorClientOptions {
  /** Where the API runs, e.g. https://memory.example.com (no trailing /api). */
  baseUrl: string;
  getToken: TokenSource;
  /** Another fetch, e.g. one that adds tracing; the global one by default. */
  fetch?: typeof fetch;
  /**
   * The consistency token to start from (see consistencyTokenHeader): for a
   * server that makes a client per request, the one the last request of
   * the same user left, e.g. in a cookie (`client.consistencyToken()`).
   */
  consistencyToken?: string;
}

type Query = Record<string, string | number | boolean | null | undefined>;

interface RawRequest {
  path?: Record<string, string>;
  query?: Query;
  body?: unknown;
  contentType?: string;
  accept?: string;
  signal?: AbortSignal;
}

/** What `counselorStream` tells of a reply while it is written. */
export interface ChatListener {
  onText?: (piece: string) => void;
  onTool?: (name: string) => void;
  signal?: AbortSignal;
}

/**
 * The header that carries read-your-writes across the service's instances:
 * with a read replica configured, the answer to a request that wrote names
 * where the write left the database, and a request that sends it back is
 * read from the replica only once it has that write (else from the
 * primary). The client keeps the newest one and sends it on every request,
 * so a read after a write sees it whichever instance answers.
 */
export const consistencyTokenHeader = "Memory-Consistency-Token";

export function createMentorClient(options: MentorClientOptions) {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const fetchFn = options.fetch ?? globalThis.fetch;
  // The newest consistency token an answer carried, this client's own: a
  // token is opaque, so the newest received stands for the writes before it.
  let consistencyToken = options.consistencyToken || null;

  // send makes the request and throws MentorError unless it succeeded; the
  // caller reads the body, so an export can stream.
  async function send(method: Method, path: string, request: RawRequest = {}): Promise<Response> {
    const headers: Record<string, string> = {};
    if (request.accept) headers["Accept"] = request.accept;
    const token = await options.getToken();
    if (token) headers["Authorization"] = `Bearer ${token}`;
    if (consistencyToken) headers[consistencyTokenHeader] = consistencyToken;
    let body: BodyInit | undefined;
    if (request.body !== undefined) {
      headers["Content-Type"] = request.contentType ?? "application/json";
      body = request.contentType ? (request.body as BodyInit) : JSON.stringify(request.body);
    }
    const response = await fetchFn(baseUrl + resolvePath(path, request.path) + queryString(request.query), {
      method: method.toUpperCase(),
      headers,
      body,
      signal: request.signal,
    });
    // Kept from failed answers too: a write may have committed before the
    // request failed.
    consistencyToken = response.headers.get(consistencyTokenHeader) ?? consistencyToken;
    if (!response.ok) throw await errorOf(response);
    return response;
  }

  /**
   * Any operation of the API, typed by its path and method:
   * `request("get", "/api/memories/{id}/sources", { path: { id } })`.
   */
  async function request<M extends Method, P extends PathsWith<M>>(
    method: M,
    path: P,
    ...[options]: OptionsArg<Operation<P, M>>
  ): Promise<Answer<Operation<P, M>>> {
    const response = await send(method, path, (options ?? {}) as RawRequest);
    return (await response.json()) as Answer<Operation<P, M>>;
  }

  // Helpers name the operations a mentor's app uses most; each is request
  // with its path and method filled in.
  type Options<M extends Method, P extends PathsWith<M>> = RequestOptions<Operation<P, M>>;
  // The API reads an empty learner_id as the general conversation.
  const learner = (learnerId: string | null | undefined) => ({ learner_id: learnerId ?? "" });

  return {
    request,
    send,
    /** The newest consistency token an answer carried, to keep for a later client of the same user. */
    consistencyToken: () => consistencyToken ?? undefined,

    learners: {
      list: () => request("get", "/api/learners"),
      add: (name: string) => request("post", "/api/learners", { body: { name } }),
      rename: (id: string, name: string) => request("patch", "/api/learners/{id}", { path: { id }, body: { name } }),
      erase: (id: string) => request("delete", "/api/learners/{id}", { path: { id } }),
      profile: (id: string) => request("get", "/api/learners/{id}/profile", { path: { id } }),
      profileMarkdown: async (id: string) =>
        (await send("get", "/api/learners/{id}/profile", { path: { id }, query: { format: "markdown" } })).text(),
      settings: (id: string) => request("get", "/api/learners/{id}/settings", { path: { id } }),
      writeSettings: (id: string, learning: boolean) =>
        request("put", "/api/learners/{id}/settings", { path: { id }, body: { learning } }),
    },

    conversation: {
      // One GET serves both reading and searching; each helper narrows the
      // answer to its own shape.
      get: async (learnerId?: string | null) => {
        const answer = await request("get", "/api/conversation-memory", { query: learner(learnerId) });
        if (!("conversation_update" in answer)) throw new TypeError("the API answered a read with search results");
        return answer;
      },
      /** Stores turns; resending turns already stored is harmless (ids make it exact). */
      post: (learnerId: string | null | undefined, turns: PostedTurn[], forceRegenerate = false) =>
        request("post", "/api/conversation-memory", {
          body: { learner_id: learnerId ?? null, conversation_turns: turns, force_regenerate: forceRegenerate },
        }),
      clear: (learnerId?: string | null) =>
        request("delete", "/api/conversation-memory", { query: learner(learnerId) }),
      search: async (
        search: string,
        query: Omit<NonNullable<Options<"get", "/api/conversation-memory">["query"]>, "search"> = {},
      ) => {
        const answer = await request("get", "/api/conversation-memory", { query: { ...query, search } });
        if (!("results" in answer)) throw new TypeError("the API answered a search without results");
        return answer;
      },
      /**
       * An archived conversation, as a search result with `archived: true`
       * names it, with a page of its turns in the order said (100 unless
       * `limit` says otherwise); `next_offset`, passed as `offset`, asks
       * for the next page, and is null after the last.
       */
      archive: (id: string, query?: Options<"get", "/api/archives/{id}">["query"]) =>
        request("get", "/api/archives/{id}", { path: { id }, query }),
    },

    memories: {
      list: (query?: Options<"get", "/api/memories">["query"]) => request("get", "/api/memories", { query }),
      add: (memory: Options<"post", "/api/memories">["body"]) => request("post", "/api/memories", { body: memory }),
      patch: (id: string, change: NonNullable<Options<"patch", "/api/memories/{id}">["body"]>) =>
        request("patch", "/api/memories/{id}", { path: { id }, body: change }),
      forget: (id: string) => request("delete", "/api/memories/{id}", { path: { id } }),
      forgetMany: (query: Options<"delete", "/api/memories">["query"]) => request("delete", "/api/memories", { query }),
      /** What the mentor should know before answering `message`. */
      context: (query?: Options<"get", "/api/memories/context">["query"]) =>
        request("get", "/api/memories/context", { query }),
      sources: (id: string) => request("get", "/api/memories/{id}/sources", { path: { id } }),
      history: (id: string) => request("get", "/api/memories/{id}/history", { path: { id } }),
    },

    sessions: {
      end: (learnerId?: string | null) =>
        request("post", "/api/sessions/end", { body: { learner_id: learnerId ?? null } }),
    },

    openingContext: (query?: Options<"get", "/api/opening-context">["query"]) =>
      request("get", "/api/opening-context", { query }),

    tools: {
      list: () => request("get", "/api/tools"),
      /** Runs a tool call as the model produced it: `args` is its JSON string. */
      call: (name: string, args: string) => request("post", "/api/tools/call", { body: { name, arguments: args } }),
    },

    counselor: (chat: Options<"post", "/api/counselor">["body"]) => request("post", "/api/counselor", { body: chat }),

    /**
     * Mr. Mentor's reply as he writes it: `onText` hears each piece of the
     * text, `onTool` the name of each tool he runs, and the promise holds
     * the whole reply with its metadata, as `counselor` answers it. Aborting
     * `signal` stops the reply and the model's call. A failure, before or
     * during the reply, rejects with a MentorError.
     */
    counselorStream: async (chat: Options<"post", "/api/counselor">["body"], listen: ChatListener = {}) => {
      const response = await send("post", "/api/counselor", { body: chat, accept: "text/event-stream", signal: listen.signal });
      if (!response.body) throw new MentorError(response.status, "The reply came without a body");
      for await (const event of readEvents(response.body)) {
        switch (event.name) {
          case "text":
            listen.onText?.((event.data as Schemas["ChatTextEvent"]).text);
            break;
          case "tool":
            listen.onTool?.((event.data as Schemas["ChatToolEvent"]).name);
            break;
          case "reply":
            return event.data as Answer<Operation<"/api/counselor", "post">>;
          case "error": {
            const failed = event.data as Schemas["ChatErrorEvent"];
            throw new MentorError(failed.status, failed.error);
          }
        }
      }
      throw new MentorError(502, "The reply ended before it was complete");
    },

    actions: {
      list: (query?: Options<"get", "/api/actions">["query"]) => request("get", "/api/actions", { query }),
      confirm: (id: string) => request("post", "/api/actions/{id}/confirm", { path: { id } }),
      cancel: (id: string) => request("post", "/api/actions/{id}/cancel", { path: { id } }),
    },

    account: {
      settings: () => request("get", "/api/account/settings"),
      writeSettings: (settings: Options<"put", "/api/account/settings">["body"]) =>
        request("put", "/api/account/settings", { body: settings }),
      erase: () => request("delete", "/api/account"),
    },

    /**
     * The account's (or one learner's) archive as JSON Lines. The Response
     * is returned unread, so a route handler can pass its body on as it
     * streams: `new Response(archive.body, { headers: … })`.
     */
    exportArchive: (learnerId?: string) =>
      send("get", "/api/export", { query: learnerId === undefined ? {} : { learner_id: learnerId } }),
    importArchive: async (archive: string | Blob) =>
      (await send("post", "/api/import", {
        body: archive,
        contentType: "application/x-ndjson",
      }).then((r) => r.json())) as Answer<Operation<"/api/import", "post">>,
  };
}

export type MentorClient = ReturnType<typeof createMentorClient>;

function resolvePath(template: string, params: Record<string, string> = {}): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new TypeError(`missing path parameter ${name} of ${template}`);
    return encodeURIComponent(value);
  });
}

// Leaves out undefined values; null is sent as "null", which the API reads
// as no learner (the general conversation), as it does "".
function queryString(query: Query = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined) search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}
