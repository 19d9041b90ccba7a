/** Reading a response body with a byte cap, for replies from endpoints Relay does not control. */

export type CappedRead =
  | { ok: true; text: string }
  | { ok: false; reason: "oversize" | "encoding" | "transport"; message: string };

/**
 * Reads at most `cap` bytes of the body. `refuse`: a longer body is an error, unread past the
 * cap; `truncate`: its first `cap` bytes are kept (error excerpts).
 */
export async function readCapped(response: Response, cap: number, mode: "refuse" | "truncate"): Promise<CappedRead> {
  const reader = response.body?.getReader();
  if (!reader) return { ok: true, text: "" };
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (size + value.byteLength > cap) {
        await reader.cancel().catch(() => undefined);
        if (mode === "refuse") return { ok: false, reason: "oversize", message: `over ${cap} bytes` };
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
  return decodeChunks(chunks, size, mode === "refuse");
}

/** `chunks` (`size` bytes in all) as one UTF-8 text; `fatal`: bytes that are not UTF-8 are an error. */
export function decodeChunks(
  chunks: readonly Uint8Array[],
  size: number,
  fatal: boolean,
): { ok: true; text: string } | { ok: false; reason: "encoding"; message: string } {
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
