import { RelayConnectionError } from "./errors.ts";
import type { LiveEvent } from "./types.ts";

/**
 * A session's live events over its WebSocket (`GET /v1/sessions/:id/ws`,
 * docs/runs.md#live-events) as an async iterator that reconnects by itself: each reconnection
 * asks for the events after the last one seen (`?after=`), so none is missed or repeated.
 * The key travels as the subprotocol `bearer.<key>` beside `relay.v1`, which works in
 * browsers, Node 22 and Workers alike.
 */

/** The standard WebSocket constructor (globalThis.WebSocket), or a compatible one. */
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocket;

export interface SubscribeOptions {
  /** Replay the events after this id first; without it, the subscription starts now. */
  after?: string;
  /** Closes the subscription. */
  signal?: AbortSignal;
  /** Reconnect when the socket drops after it subscribed (default true). */
  reconnect?: boolean;
  /** Called when the subscription goes live, reconnects or ends. */
  onState?: (state: "live" | "reconnecting" | "closed") => void;
  /** A keep-alive `ping` this often, in ms (default 30 000; 0: none). */
  pingIntervalMs?: number;
}

export interface LiveSubscription extends AsyncIterable<LiveEvent> {
  /** The id of the last event received (where a reconnection resumes); null before the first. */
  readonly lastEventId: string | null;
  /** Resolves once the first connection is live (the server's `subscribed` frame); rejects if it never is. */
  readonly ready: Promise<void>;
  /** Closes the socket and ends the iteration. */
  close(): void;
}

/** Reconnections that fail in a row before it gives up. */
const MAX_FAILED_RECONNECTS = 5;
const MAX_DELAY_MS = 10_000;

export interface LiveSocketTarget {
  url: string;
  apiKey: string;
  WebSocket: WebSocketConstructor;
}

/** The subscription; see {@link SubscribeOptions}. */
export function subscribeSession(
  target: LiveSocketTarget,
  sessionId: string,
  options: SubscribeOptions = {},
): LiveSubscription {
  const queue: LiveEvent[] = [];
  let waiting: ((result: IteratorResult<LiveEvent, undefined>) => void) | null = null;
  let failWaiting: ((error: unknown) => void) | null = null;
  let failure: unknown = null;
  let ended = false;
  let socket: WebSocket | null = null;
  let cursor: string | null = options.after ?? null;
  let lastEventId: string | null = null;
  let everLive = false;
  let failedInARow = 0;
  let delay = 250;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let ping: ReturnType<typeof setInterval> | undefined;
  let markReady: () => void = () => undefined;
  let failReady: (error: unknown) => void = () => undefined;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failReady = reject;
  });
  // A caller that only iterates need not also await `ready`.
  ready.catch(() => undefined);

  const wsUrl = (): string => {
    const url = new URL(`/v1/sessions/${encodeURIComponent(sessionId)}/ws`, target.url);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    if (cursor) url.searchParams.set("after", cursor);
    return url.toString();
  };

  const onAbort = (): void => finish();
  const finish = (error: unknown = null): void => {
    if (ended) return;
    ended = true;
    options.signal?.removeEventListener("abort", onAbort);
    failure = error;
    clearTimeout(retry);
    clearInterval(ping);
    try {
      socket?.close(1000, "done");
    } catch {
      // already closed
    }
    options.onState?.("closed");
    if (error) {
      failReady(error);
      failWaiting?.(error);
    } else {
      waiting?.({ value: undefined, done: true });
    }
    waiting = failWaiting = null;
  };

  const push = (event: LiveEvent): void => {
    if (waiting) {
      const resolve = waiting;
      waiting = failWaiting = null;
      resolve({ value: event, done: false });
    } else queue.push(event);
  };

  const open = (): void => {
    const url = wsUrl();
    let live = false;
    const ws = new target.WebSocket(url, ["relay.v1", `bearer.${target.apiKey}`]);
    socket = ws;
    ws.addEventListener("message", (message: MessageEvent) => {
      let frame: { type?: string; id?: string; after?: string | null };
      try {
        frame = JSON.parse(String(message.data));
      } catch {
        return; // "pong", or a frame that is not JSON
      }
      if (frame.type === "subscribed") {
        live = everLive = true;
        failedInARow = 0;
        delay = 250;
        // Without an event yet, a reconnection resumes where this subscription began.
        cursor ??= frame.after ?? null;
        options.onState?.("live");
        markReady();
        return;
      }
      if (frame.type === "error" || typeof frame.id !== "string") return;
      cursor = lastEventId = frame.id;
      push(frame as LiveEvent);
    });
    let dropped = false;
    // A failed handshake may fire only "error" (Node's WebSocket does), a dropped connection "close": either ends this socket once.
    const drop = (why: string): void => {
      if (dropped || ended || socket !== ws) return;
      dropped = true;
      if (!live) failedInARow++;
      // The first connection never opening is an answer (a bad key, no such session), not a blip.
      if (!everLive || options.reconnect === false || failedInARow >= MAX_FAILED_RECONNECTS) {
        finish(options.reconnect === false && live ? null : new RelayConnectionError(url, new Error(why)));
        return;
      }
      options.onState?.("reconnecting");
      retry = setTimeout(open, delay);
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    };
    ws.addEventListener("close", (event: CloseEvent) =>
      drop(`the socket closed (code ${event.code}${event.reason ? `: ${event.reason}` : ""})`),
    );
    ws.addEventListener("error", () => drop(live ? "the connection failed" : "the WebSocket handshake was refused"));
  };

  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) ended = true;
  else {
    open();
    const every = options.pingIntervalMs ?? 30_000;
    if (every > 0) {
      ping = setInterval(() => {
        try {
          if (socket?.readyState === 1) socket.send("ping");
        } catch {
          // closing: the close handler reconnects
        }
      }, every);
      (ping as { unref?: () => void }).unref?.();
    }
  }

  return {
    get lastEventId() {
      return lastEventId;
    },
    ready,
    close: () => finish(),
    [Symbol.asyncIterator]() {
      return {
        next(): Promise<IteratorResult<LiveEvent, undefined>> {
          const event = queue.shift();
          if (event) return Promise.resolve({ value: event, done: false });
          if (ended) return failure ? Promise.reject(failure) : Promise.resolve({ value: undefined, done: true });
          return new Promise((resolve, reject) => {
            waiting = resolve;
            failWaiting = reject;
          });
        },
        async return() {
          finish();
          return { value: undefined, done: true };
        },
      };
    },
  };
}
