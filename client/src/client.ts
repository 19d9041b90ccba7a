import createClient, { type Client } from "openapi-fetch";
import { apiErrorOf, errorBodyOf, RelayApiError, RelayConnectionError, RelayReplyError } from "./errors.ts";
import type { paths } from "./generated/openapi.ts";
import { type LiveSubscription, type SubscribeOptions, subscribeSession, type WebSocketConstructor } from "./live.ts";
import { type Page, paginate } from "./pagination.ts";
import { type RunStream, runStreamOf } from "./run-stream.ts";
import { arrayOf, checked, nullable, object, string, unknownValue } from "./shape.ts";

/**
 * The typed client: openapi-fetch over the generated `paths`, with the key set once, plus
 * the helpers fetch makes awkward (docs/client.md). Nothing here is specific to Node: give it
 * `fetch` and `WebSocket` (the globals by default) and it runs in Workers and browsers too.
 */

export interface RelayClientOptions {
  /** Relay's base URL, e.g. `http://127.0.0.1:8787`. */
  url: string;
  /** An API key; it names the tenant everything is scoped to. */
  apiKey: string;
  /** Defaults to the global fetch (a service binding's `fetch` works too). */
  fetch?: (request: Request) => Promise<Response>;
  /** Defaults to the global WebSocket. */
  WebSocket?: WebSocketConstructor;
  /** Headers added to every request (a user agent, a trace id). */
  headers?: Record<string, string>;
}

/** A generated-client answer, as openapi-fetch returns it. */
export interface Answer<D> {
  data?: D;
  error?: unknown;
  response: Response;
}

/** Paths whose GET answers a page (`{ items, next_cursor }`). */
export type ListPath = {
  [P in keyof paths]: paths[P] extends {
    get: { responses: { 200: { content: { "application/json": { items: unknown[]; next_cursor: string | null } } } } };
  }
    ? P
    : never;
}[keyof paths];

type ListOperation<P extends ListPath> = paths[P]["get"];
/** One item of the list at `P`. */
export type ListItem<P extends ListPath> =
  ListOperation<P>["responses"][200]["content"]["application/json"]["items"][number];
type ListQuery<P extends ListPath> = ListOperation<P> extends { parameters: { query?: infer Q } } ? Q : never;
type ListPathParams<P extends ListPath> = ListOperation<P> extends { parameters: { path: infer A } } ? A : never;

export interface RelayClient {
  readonly url: string;
  /** The generated client: `api.GET("/v1/agents/{name}", { params: { path: { name } } })` → `{ data, error, response }`. */
  readonly api: Client<paths, "application/json">;
  /** Sends a user message and streams its run (Server-Sent Events). */
  streamMessage(sessionId: string, content: string, options?: { signal?: AbortSignal }): Promise<RunStream>;
  /** Follows a session's live events over its WebSocket, resuming after the last event on reconnect. */
  subscribe(sessionId: string, options?: SubscribeOptions): LiveSubscription;
  /** Every item of a list, fetched page by page as the loop asks. */
  list<P extends ListPath>(
    path: P,
    params?: { query?: Omit<NonNullable<ListQuery<P>>, "cursor">; path?: ListPathParams<P> },
    options?: { limit?: number },
  ): AsyncGenerator<ListItem<P>, void, undefined>;
}

/** What every list answers; its items are the caller's to check. */
const PAGE = object({ items: arrayOf(unknownValue), next_cursor: nullable(string) });

/**
 * The answer's data, or a RelayApiError with the API's code and message, a RelayReplyError
 * when a 2xx body is not JSON, or a RelayConnectionError when no answer came:
 * `const agent = await unwrap(relay.api.GET(…))`. `request` (`GET /v1/agents`) is for messages.
 */
export async function unwrap<D>(call: Promise<Answer<D>>, url = "Relay", request = ""): Promise<D> {
  let answer: Answer<D>;
  try {
    answer = await call;
  } catch (error) {
    if (error instanceof RelayApiError || error instanceof RelayConnectionError || error instanceof RelayReplyError)
      throw error;
    // openapi-fetch parses a 2xx body with JSON.parse: a SyntaxError is an answer, not a lost connection.
    if (error instanceof SyntaxError)
      throw new RelayReplyError(url, request, `a body that is not JSON (${error.message})`, error);
    throw new RelayConnectionError(url, error);
  }
  if (!answer.response.ok || answer.error !== undefined)
    throw new RelayApiError(answer.response.status, errorBodyOf(answer.response.status, answer.error));
  return answer.data as D;
}

export function createRelayClient(options: RelayClientOptions): RelayClient {
  const url = options.url.replace(/\/+$/, "");
  const fetcher = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const api = createClient<paths, "application/json">({
    baseUrl: url,
    fetch: fetcher,
    headers: { ...options.headers, Authorization: `Bearer ${options.apiKey}` },
  });

  return {
    url,
    api,

    async streamMessage(sessionId, content, { signal } = {}) {
      let response: Response;
      try {
        response = await fetcher(
          new Request(`${url}/v1/sessions/${encodeURIComponent(sessionId)}/messages`, {
            method: "POST",
            headers: {
              ...options.headers,
              Authorization: `Bearer ${options.apiKey}`,
              "Content-Type": "application/json",
              Accept: "text/event-stream",
            },
            body: JSON.stringify({ role: "user", content }),
            ...(signal ? { signal } : {}),
          }),
        );
      } catch (error) {
        throw new RelayConnectionError(url, error);
      }
      if (!response.ok) throw await apiErrorOf(response);
      if (!response.body || !(response.headers.get("Content-Type") ?? "").startsWith("text/event-stream")) {
        await response.body?.cancel().catch(() => undefined);
        throw new RelayReplyError(
          url,
          "POST /v1/sessions/{id}/messages",
          `${response.headers.get("Content-Type") ?? "no content type"} where an event stream was asked for`,
        );
      }
      return runStreamOf(response.body, url);
    },

    subscribe(sessionId, subscribeOptions) {
      const WebSocketClass = options.WebSocket ?? globalThis.WebSocket;
      if (!WebSocketClass) throw new TypeError("no WebSocket: pass one in the client's options");
      return subscribeSession({ url, apiKey: options.apiKey, WebSocket: WebSocketClass }, sessionId, subscribeOptions);
    },

    list(path, params = {}, listOptions = {}) {
      // biome-ignore lint/suspicious/noExplicitAny: a generic path's init is beyond what openapi-fetch can infer here.
      const get = api.GET as (path: string, init: unknown) => Promise<Answer<any>>;
      return paginate(async (cursor) => {
        const data = await unwrap(
          get(path, {
            params: {
              ...(params.path ? { path: params.path } : {}),
              query: { ...(params.query ?? {}), ...(cursor ? { cursor } : {}) },
            },
          }),
          url,
          `GET ${path}`,
        );
        // A page without items or cursor would end the loop in a TypeError, or repeat the first page forever.
        return checked<Page<ListItem<typeof path>>>(data, PAGE, url, `GET ${path}`);
      }, listOptions);
    },
  };
}
