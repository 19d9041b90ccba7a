import { createParser, type EventSourceMessage, type ParseError } from "eventsource-parser";

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
 * line is dropped). Leaving early cancels the body. The bytes are decoded and parsed as each
 * read returns them, with no stream between the body and the parser: a piece of a model's
 * answer is an event as soon as its bytes are read.
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parsed: EventSourceMessage[] = [];
  let overflow: ParseError | null = null;
  const parser = createParser({
    onEvent: (event) => parsed.push(event),
    // Other parse errors are ignored, as the spec says; an overflow leaves the parser unusable.
    onError: (error) => {
      if (error.type === "max-buffer-size-exceeded") overflow ??= error;
    },
    maxBufferSize: MAX_SSE_LINE,
  });
  let ended = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      parser.feed(done ? decoder.decode() : decoder.decode(value, { stream: true }));
      if (overflow) throw overflow;
      for (let event = parsed.shift(); event; event = parsed.shift())
        yield {
          event: event.event ?? "message",
          data: event.data,
          ...(event.id === undefined ? {} : { id: event.id }),
        };
      if (done) {
        ended = true;
        return;
      }
    }
  } finally {
    if (!ended) await reader.cancel().catch(() => undefined);
  }
}
