/**
 * Reading a body with a byte cap: requests Relay is sent (src/api/body.ts) and replies from
 * endpoints Relay does not control. One reader, three ways past the cap:
 * - `refuse`: an error, the rest unread (the stream cancelled);
 * - `truncate`: the first `cap` bytes are kept (error excerpts);
 * - `drain`: an error, the rest read and dropped, never cancelled — a cancelled request
 *   stream is what turned an early 413 into a reset connection under `wrangler dev` (its
 *   proxy pipes the client's body into the Worker and aborts the connection when the Worker
 *   cancels that pipe). Memory stays at the cap; the platform's request size limit bounds
 *   the time spent.
 */

export type CappedRead =
  | { ok: true; text: string }
  | { ok: false; reason: "oversize" | "encoding" | "transport"; message: string };

export type PastCap = "refuse" | "truncate" | "drain";

/**
 * At most `cap` bytes of the body, as UTF-8 text. `fatal`: bytes that are not UTF-8 are an
 * error (`encoding`) rather than replacement characters; by default they are, unless the
 * body may be cut (`truncate`, where a cut may fall inside a character).
 */
export async function readCapped(
  message: { body: ReadableStream<Uint8Array> | null },
  cap: number,
  past: PastCap,
  { fatal = past !== "truncate" }: { fatal?: boolean } = {},
): Promise<CappedRead> {
  const reader = message.body?.getReader();
  if (!reader) return { ok: true, text: "" };
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (size + value.byteLength > cap) {
        const oversize = { ok: false, reason: "oversize", message: `over ${cap} bytes` } as const;
        if (past === "drain") {
          while (!(await reader.read()).done) {
            // Drained, not kept: see above.
          }
          return oversize;
        }
        await reader.cancel().catch(() => undefined);
        if (past === "refuse") return oversize;
        chunks.push(value.subarray(0, cap - size));
        size = cap;
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  } catch (error) {
    return { ok: false, reason: "transport", message: error instanceof Error ? error.message : String(error) };
  }
  return decodeChunks(chunks, size, fatal);
}

/** `chunks` (`size` bytes in all) as one UTF-8 text; `fatal`: bytes that are not UTF-8 are an error. */
function decodeChunks(chunks: readonly Uint8Array[], size: number, fatal: boolean): CappedRead {
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  try {
    return { ok: true, text: new TextDecoder("utf-8", { fatal, ignoreBOM: false }).decode(bytes) };
  } catch {
    return { ok: false, reason: "encoding", message: "not UTF-8" };
  }
}
