import { EventSourceParserStream } from "eventsource-parser/stream";

/**
 * Server-Sent Events, read with eventsource-parser (the WHATWG parsing rules, whatever the
 * chunking): a byte stream in, one event per blank-line-terminated block out. A line longer
 * than MAX_SSE_LINE ends the stream with an error, so an endpoint that never ends a line
 * cannot grow an isolate's memory without bound.
 */

/** The longest line (or unfinished event) held while waiting for its end, in characters. */
export const MAX_SSE_LINE = 4 * 1024 * 1024;

export interface SseEvent {
  /** The `event:` field, "message" when absent. */
  event: string;
  data: string;
  id?: string;
}

/**
 * Events from `body` as they arrive; ends when the stream ends (a block without a final blank
 * line is dropped). Leaving early cancels the body.
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream({ maxBufferSize: MAX_SSE_LINE }))
    .getReader();
  let ended = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        ended = true;
        return;
      }
      yield { event: value.event ?? "message", data: value.data, ...(value.id === undefined ? {} : { id: value.id }) };
    }
  } finally {
    if (!ended) await reader.cancel().catch(() => undefined);
  }
}
