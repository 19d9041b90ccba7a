import { decodeChunks } from "../lib/read-capped";
/**
 * Reading a request body with a byte cap. A body that declares a `Content-Length` over the cap
 * is refused before a byte of it is read. One that does not (chunked) is read up to the cap and
 * the rest is drained, never cancelled: a cancelled request stream is what turned an early 413
 * into a reset connection under `wrangler dev` (its proxy pipes the client's body into the
 * Worker and aborts the connection when the Worker cancels that pipe). Draining keeps memory at
 * the cap; the platform's own request size limit bounds the time spent.
 */

export type BodyRead =
  | { ok: true; text: string }
  | { ok: false; reason: "oversize"; declared: boolean }
  | { ok: false; reason: "encoding" | "transport"; message: string };

/** The declared length, or null when there is none (or it is not a number). */
export function declaredLength(request: Request): number | null {
  const header = request.headers.get("Content-Length");
  if (header === null || !/^\s*\d{1,16}\s*$/.test(header)) return null;
  return Number(header);
}

/**
 * The body as text, at most `limit` bytes. `fatal`: bytes that are not UTF-8 are an error
 * (`encoding`) rather than replacement characters.
 */
export async function readBody(request: Request, limit: number, { fatal = false } = {}): Promise<BodyRead> {
  const declared = declaredLength(request);
  if (declared !== null && declared > limit) return { ok: false, reason: "oversize", declared: true };
  const reader = request.body?.getReader();
  if (!reader) return { ok: true, text: "" };
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        while (!(await reader.read()).done) {
          // Drained, not kept: see above.
        }
        return { ok: false, reason: "oversize", declared: false };
      }
      chunks.push(value);
    }
  } catch (error) {
    return { ok: false, reason: "transport", message: error instanceof Error ? error.message : String(error) };
  }
  return decodeChunks(chunks, size, fatal);
}
