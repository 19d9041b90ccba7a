/**
 * Server-Sent Events, read: a byte stream in, one event per blank-line-terminated block out
 * (the WHATWG parsing rules: `data:` lines joined with "\n", a comment line starts with ":",
 * one optional space after the colon, CRLF, CR or LF line ends). Events arrive as the bytes
 * do, whatever the chunking.
 */

export interface SseEvent {
  /** The `event:` field, "message" when absent. */
  event: string;
  data: string;
  id?: string;
}

/** Events from `body` as they arrive; ends when the stream ends (a block without a final blank line is dropped). */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = "";
  let event: { event?: string; id?: string; data?: string[] } = {};
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      for (;;) {
        const end = lineEnd(buffer, done);
        if (end === null) break;
        const line = buffer.slice(0, end.at);
        buffer = buffer.slice(end.at + end.length);
        if (line === "") {
          if (event.data !== undefined) {
            yield {
              event: event.event ?? "message",
              data: event.data.join("\n"),
              ...(event.id === undefined ? {} : { id: event.id }),
            };
          }
          event = {};
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "data") {
          event.data ??= [];
          event.data.push(value);
        } else if (field === "event") event.event = value;
        else if (field === "id" && !value.includes("\0")) event.id = value;
      }
      if (done) return;
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * Where the first line of `buffer` ends: CRLF, CR or LF. A CR at the very end waits for the next chunk
 * (it may be CRLF).
 */
function lineEnd(buffer: string, done: boolean): { at: number; length: number } | null {
  for (let i = 0; i < buffer.length; i++) {
    const c = buffer.charCodeAt(i);
    if (c === 10) return { at: i, length: 1 };
    if (c === 13) {
      if (i + 1 < buffer.length) return { at: i, length: buffer.charCodeAt(i + 1) === 10 ? 2 : 1 };
      return done ? { at: i, length: 1 } : null;
    }
  }
  return null;
}
