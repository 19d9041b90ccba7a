import type { Result } from "../../../src/errors";
import { sseFrame } from "../../../src/runtime/live-events";
import type { LiveDelta, LiveEvent } from "../../../src/schemas/live";
import type { LiveStore } from "./live-store";

/**
 * The session's live subscribers (docs/runs.md, Live events): hibernatable WebSockets, which every
 * subscriber of the session receives every event on, and the SSE stream of one run for the
 * caller that started it. Events are written to storage with the change they describe;
 * `publish()` runs after each commit and sends each subscriber what it has not had, by its
 * own cursor (a socket keeps its cursor in its attachment, so it survives hibernation).
 *
 * The pieces of an answer a model is writing (`message.delta`) are not stored: `delta()`
 * sends each to every socket and to its run's streams at once, and keeps the message's
 * pieces so far, so a subscriber that connects mid-message gets them right after the stored
 * events it missed. They are dropped once the message is written (its whole text is then in
 * the stored `message` event) or abandoned.
 */

export const LIVE_SOCKET_TAG = "live";
/** The subprotocol Relay speaks; a browser offers it beside `bearer.<key>`, which carries the key. */
export const LIVE_PROTOCOL = "relay.v1";
const PAGE = 500;
/** SSE comments this often keep proxies from closing a quiet stream (a long model call). */
const HEARTBEAT_MS = 15_000;

const encoder = new TextEncoder();

interface RunStream {
  runId: string;
  cursor: string;
  writer: WritableStreamDefaultWriter<Uint8Array>;
  readable: ReadableStream<Uint8Array>;
  heartbeat: ReturnType<typeof setInterval>;
  /** The object the stream ends with once the run has stopped running (ended or paused); null while it runs. */
  final: () => unknown;
  /** Called when the client went away before the stream ended. */
  gone: () => void;
}

export interface LiveHubDeps {
  ctx: DurableObjectState;
  store: LiveStore;
  /** False while the object has no tables (nothing to publish). */
  ready: () => boolean;
}

/** What the run loop uses of the hub: it hands out an answer's pieces as the model writes them. */
export interface LiveDeltas {
  delta(delta: LiveDelta): void;
  endMessage(runId: string): void;
}

export class LiveHub implements LiveDeltas {
  private readonly streams = new Set<RunStream>();
  /** Per run, the pieces of the message its model is writing now. */
  private readonly writing = new Map<string, LiveDelta[]>();

  constructor(private readonly deps: LiveHubDeps) {}

  /**
   * A WebSocket upgrade for the session's live events (426 without one; 404 or 410 when the
   * session is gone), resuming after the event id in `?after=`.
   */
  upgrade(request: Request, session: Result<unknown>): Response {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket")
      return Response.json({ error: { code: "NOT_FOUND", message: "Expected a WebSocket upgrade." } }, { status: 426 });
    if (!session.ok)
      return Response.json({ error: session.error }, { status: session.error.code === "SESSION_EXPIRED" ? 410 : 404 });
    return this.accept(request, new URL(request.url).searchParams.get("after"));
  }

  /** Subscribers only listen ("ping" is answered by the runtime); anything else is told so. */
  onMessage(ws: WebSocket, message: string | ArrayBuffer): void {
    if (message === "ping") return;
    ws.send(
      JSON.stringify({
        type: "error",
        error: { code: "VALIDATION_FAILED", message: 'This socket only sends events; send "ping" to keep it alive.' },
      }),
    );
  }

  /** The client closed: close our side with its code (1005, "none given", is not a code one may send). */
  onClose(ws: WebSocket, code: number, reason: string): void {
    try {
      ws.close(code === 1005 ? 1000 : code, reason);
    } catch {
      // Already closed.
    }
  }

  /** Sends a piece of an answer to every socket and to its run's streams, and keeps it for latecomers. */
  delta(delta: LiveDelta): void {
    const pieces = this.writing.get(delta.run_id);
    if (pieces && pieces[0]?.data.message_id === delta.data.message_id) pieces.push(delta);
    else this.writing.set(delta.run_id, [delta]);
    const json = JSON.stringify(delta);
    for (const socket of this.deps.ctx.getWebSockets(LIVE_SOCKET_TAG)) {
      try {
        socket.send(json);
      } catch {
        // Closed under us: its close handler tidies up.
      }
    }
    for (const stream of this.streams)
      if (stream.runId === delta.run_id) this.write(stream, sseFrame({ type: delta.type, data: delta }));
  }

  /** The run's message is written or abandoned: latecomers no longer get its pieces. */
  endMessage(runId: string): void {
    this.writing.delete(runId);
  }

  /** Whether anyone but `except` listens: a socket, or another stream of the run. */
  listening(runId: string, except?: ReadableStream<Uint8Array>): boolean {
    if (this.deps.ctx.getWebSockets(LIVE_SOCKET_TAG).length > 0) return true;
    return [...this.streams].some((s) => s.runId === runId && s.readable !== except);
  }

  /** Sends every subscriber the events committed since its cursor; ends run streams whose run stopped. */
  publish(): void {
    if (!this.deps.ready()) return;
    const pages = new Map<string, LiveEvent[]>();
    for (const socket of this.deps.ctx.getWebSockets(LIVE_SOCKET_TAG)) this.sendSocket(socket, pages);
    for (const stream of this.streams) this.sendStream(stream);
  }

  /** A WebSocket subscriber (after auth and the session check): replayed from `after`, else from now. */
  accept(request: Request, after: string | null): Response {
    const { 0: client, 1: server } = new WebSocketPair();
    this.deps.ctx.acceptWebSocket(server, [LIVE_SOCKET_TAG]);
    const cursor = after ?? this.deps.store.latest();
    server.serializeAttachment({ cursor });
    server.send(JSON.stringify({ type: "subscribed", after: cursor }));
    this.sendSocket(server, new Map());
    for (const pieces of this.writing.values()) for (const delta of pieces) server.send(JSON.stringify(delta));
    const offered = (request.headers.get("Sec-WebSocket-Protocol") ?? "").split(",").map((p) => p.trim());
    const headers = offered.includes(LIVE_PROTOCOL) ? { "Sec-WebSocket-Protocol": LIVE_PROTOCOL } : undefined;
    return new Response(null, { status: 101, webSocket: client, ...(headers ? { headers } : {}) });
  }

  /**
   * The SSE stream of one run: its events so far (after event id `after`, when given), then as
   * they happen (the pieces of an answer among them), then the final object. `gone` is called
   * if the client goes away before that.
   */
  streamRun(
    runId: string,
    final: () => unknown,
    gone: () => void = () => undefined,
    after = "",
  ): ReadableStream<Uint8Array> {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const writer = writable.getWriter();
    const stream: RunStream = {
      runId,
      cursor: after,
      writer,
      readable,
      final,
      gone,
      heartbeat: setInterval(() => this.write(stream, ": keep-alive\n\n"), HEARTBEAT_MS),
    };
    this.streams.add(stream);
    this.sendStream(stream);
    for (const delta of this.writing.get(runId) ?? []) this.write(stream, sseFrame({ type: delta.type, data: delta }));
    return readable;
  }

  private sendSocket(socket: WebSocket, pages: Map<string, LiveEvent[]>): void {
    let cursor = (socket.deserializeAttachment() as { cursor?: string } | null)?.cursor ?? "";
    for (;;) {
      let page = pages.get(cursor);
      if (!page) {
        page = this.deps.store.after(cursor, PAGE);
        pages.set(cursor, page);
      }
      if (page.length === 0) break;
      try {
        for (const event of page) socket.send(JSON.stringify(event));
      } catch {
        return; // closed under us: its close handler tidies up
      }
      cursor = page.at(-1)!.id;
      socket.serializeAttachment({ cursor });
      if (page.length < PAGE) break;
    }
  }

  private sendStream(stream: RunStream): void {
    for (;;) {
      const page = this.deps.store.after(stream.cursor, PAGE, stream.runId);
      for (const event of page) this.write(stream, sseFrame({ id: event.id, type: event.type, data: event }));
      if (page.length > 0) stream.cursor = page.at(-1)!.id;
      if (page.length < PAGE) break;
    }
    const final = stream.final();
    if (final !== null) {
      this.write(stream, sseFrame({ type: "result", data: final }));
      this.close(stream);
    }
  }

  private write(stream: RunStream, text: string): void {
    stream.writer.write(encoder.encode(text)).catch(() => {
      // The client went away (its end of the stream was cancelled) before the run's end.
      if (this.close(stream)) stream.gone();
    });
  }

  /** True when this call closed it (it was open). */
  private close(stream: RunStream): boolean {
    if (!this.streams.delete(stream)) return false;
    clearInterval(stream.heartbeat);
    stream.writer.close().catch(() => undefined);
    return true;
  }
}
