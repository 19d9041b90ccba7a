import { EventSourceParserStream } from "eventsource-parser/stream";
import { RelayConnectionError, RelayReplyError } from "./errors.ts";
import { checked, object, string } from "./shape.ts";
import type { LiveEvent, MessageRun } from "./types.ts";

/**
 * A run's Server-Sent Events (`POST /v1/sessions/:id/messages` with `Accept:
 * text/event-stream`, docs/runs.md#live-events) as an async iterator of live events, and the
 * run's final answer, which the stream ends with (`event: result`).
 */
export interface RunStream extends AsyncIterable<LiveEvent> {
  /** The id of the last event read (a session WebSocket resumes after it); null before the first. */
  readonly lastEventId: string | null;
  /** The answer the stream ended with (`{ message, run }`); reads the events not read yet first. */
  result(): Promise<MessageRun>;
  /** Stops reading; the run goes on in Relay. */
  cancel(): Promise<void>;
}

/** The frame name of the stream's last event: the JSON answer. */
const RESULT = "result";
const REQUEST = "POST /v1/sessions/{id}/messages";
/** What `result()` promises its caller: the run, with its id and status. */
const MESSAGE_RUN = object({ run: object({ id: string, status: string }) });

/** The result frame's answer, or a RelayReplyError when it is not JSON or has no run. */
function resultOf(data: string, url: string): MessageRun {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch (error) {
    throw new RelayReplyError(url, REQUEST, `a result event that is not JSON (${(error as Error).message})`, error);
  }
  return checked<MessageRun>(parsed, MESSAGE_RUN, url, REQUEST);
}

/**
 * One SSE message as a live event. Relay's frames carry the whole event as data; a frame
 * that does not (an event type this client predates) is wrapped so it still reaches the
 * caller, typed by its `event:` name.
 */
function liveEventOf(frame: { event?: string | undefined; id?: string | undefined; data: string }): LiveEvent {
  let data: unknown = frame.data;
  try {
    data = JSON.parse(frame.data);
  } catch {
    // not JSON: the text is the data
  }
  const whole = data as Partial<LiveEvent> | null;
  // A whole live event; a `message.delta` has no id (it is not stored).
  if (whole && typeof whole === "object" && typeof whole.type === "string" && "data" in whole)
    return { ...whole, id: typeof whole.id === "string" ? whole.id : "" } as LiveEvent;
  return {
    id: frame.id ?? "",
    type: frame.event ?? "message",
    session_id: (whole as { session_id?: string } | null)?.session_id ?? "",
    run_id: (whole as { run_id?: string | null } | null)?.run_id ?? null,
    at: new Date().toISOString(),
    data,
  } as LiveEvent;
}

/** A run stream over an SSE response body (already checked to be a 2xx `text/event-stream`). */
export function runStreamOf(body: ReadableStream<Uint8Array>, url: string): RunStream {
  const reader = body
    .pipeThrough(new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>)
    .pipeThrough(new EventSourceParserStream())
    .getReader();
  let lastEventId: string | null = null;
  let final: MessageRun | null = null;
  let done = false;

  async function next(): Promise<IteratorResult<LiveEvent, undefined>> {
    while (!done) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        done = true;
        throw new RelayConnectionError(url, error);
      }
      if (chunk.done) {
        done = true;
        break;
      }
      const frame = chunk.value;
      if (frame.event === RESULT) {
        done = true;
        await reader.cancel().catch(() => undefined);
        final = resultOf(frame.data, url);
        break;
      }
      const event = liveEventOf(frame);
      if (event.id) lastEventId = event.id;
      return { value: event, done: false };
    }
    return { value: undefined, done: true };
  }

  return {
    get lastEventId() {
      return lastEventId;
    },
    [Symbol.asyncIterator]() {
      return { next, return: async () => ({ value: undefined, done: true }) };
    },
    async result() {
      while (!(await next()).done) {
        // drain the events not read
      }
      if (final === null) throw new RelayConnectionError(url, new Error("the stream ended before the run's result"));
      return final;
    },
    async cancel() {
      done = true;
      await reader.cancel().catch(() => undefined);
    },
  };
}
