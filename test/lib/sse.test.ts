import { describe, expect, it } from "vitest";
import { MAX_SSE_LINE, readSse, type SseEvent } from "../../src/lib/sse";

/** A stream that hands out `text` in the given pieces. */
function chunked(...pieces: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(encoder.encode(piece));
      controller.close();
    },
  });
}

async function all(stream: ReadableStream<Uint8Array>): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const event of readSse(stream)) out.push(event);
  return out;
}

describe("reading Server-Sent Events", () => {
  it("one event per block, data lines joined, fields and comments as the spec says", async () => {
    const events = await all(
      chunked(': keep-alive\n\ndata: {"a":1}\n\nevent: delta\nid: 7\ndata: line one\ndata:line two\n\ndata\n\n'),
    );
    expect(events).toEqual([
      { event: "message", data: '{"a":1}' },
      { event: "delta", id: "7", data: "line one\nline two" },
      { event: "message", data: "" },
    ]);
  });

  it("whatever the chunking: split inside a line, a CRLF split across chunks, a multi-byte character split", async () => {
    const text = "data: héllo\r\n\r\ndata: wörld\r\n\r\n";
    const bytes = new TextEncoder().encode(text);
    // Every split point of the bytes.
    for (let cut = 1; cut < bytes.length; cut++) {
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.slice(0, cut));
          controller.enqueue(bytes.slice(cut));
          controller.close();
        },
      });
      expect((await all(stream)).map((e) => e.data)).toEqual(["héllo", "wörld"]);
    }
  });

  it("a block the stream cut off before its blank line is not an event", async () => {
    expect(await all(chunked("data: whole\n\ndata: cut off"))).toEqual([{ event: "message", data: "whole" }]);
  });

  it("bare CR line ends count too", async () => {
    expect((await all(chunked("data: a\r\rdata: b\r\r"))).map((e) => e.data)).toEqual(["a", "b"]);
  });

  it("a line past MAX_SSE_LINE ends the read with an error instead of growing the buffer", async () => {
    const piece = "x".repeat(64 * 1024);
    let sent = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += piece.length;
        controller.enqueue(new TextEncoder().encode(sent === piece.length ? `data: ${piece}` : piece));
      },
    });
    await expect(all(endless)).rejects.toThrow(/max buffer size/);
    expect(sent).toBeGreaterThan(MAX_SSE_LINE);
    expect(sent).toBeLessThan(MAX_SSE_LINE + 4 * piece.length);
  });

  it("leaving early cancels the body", async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("data: one\n\ndata: two\n\n"));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const event of readSse(body)) {
      expect(event.data).toBe("one");
      break;
    }
    expect(cancelled).toBe(true);
  });
});
