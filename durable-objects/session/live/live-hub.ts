import type { Result } from "../../../src/errors";
import { sseFrame } from "../../../src/runtime/live-events";
import type { LiveEvent } from "../../../src/schemas/live";
import type { LiveStore } from "./live-store";

/**
 * The session's live subscribers (docs/runs.md, Live events): hibernatable WebSockets, which every
 * subscriber of the session receives every event on, and the SSE stream of one run for the
 * caller that started it. Events are written to storage with the change they describe;
 * `publish()` runs after each commit and sends each subscriber what it has not had, by its
 * own cursor (a socket keeps its cursor in its attachment, so it survives hibernation).
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
  heartbeat: ReturnType<typeof setInterval>;
  /** The object the stream ends with once the run has stopped running (ended or paused); null while it runs. */
  final: () => unknown;
}

export interface LiveHubDeps {
  ctx: DurableObjectState;
  store: LiveStore;
  /** False while the object has no tables (nothing to publish). */
  ready: () => boolean;
}

export class LiveHub {
  private readonly streams = new Set<RunStream>();

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
    const offered = (request.headers.get("Sec-WebSocket-Protocol") ?? "").split(",").map((p) => p.trim());
    const headers = offered.includes(LIVE_PROTOCOL) ? { "Sec-WebSocket-Protocol": LIVE_PROTOCOL } : undefined;
    return new Response(null, { status: 101, webSocket: client, ...(headers ? { headers } : {}) });
  }

  /** The SSE stream of one run: its events so far, then as they happen, then the final object. */
  streamRun(runId: string, final: () => unknown): ReadableStream<Uint8Array> {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const writer = writable.getWriter();
    const stream: RunStream = {
      runId,
      cursor: "",
      writer,
      final,
      heartbeat: setInterval(() => this.write(stream, ": keep-alive\n\n"), HEARTBEAT_MS),
    };
    this.streams.add(stream);
    this.sendStream(stream);
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
    stream.writer.write(encoder.encode(text)).catch(() => this.close(stream));
  }

  private close(stream: RunStream): void {
    if (!this.streams.delete(stream)) return;
    clearInterval(stream.heartbeat);
    stream.writer.close().catch(() => undefined);
  }
}
