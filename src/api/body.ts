import { readCapped } from "../lib/read-capped";

/**
 * Reading a request body with a byte cap. A body that declares a `Content-Length` over the cap
 * is refused before a byte of it is read; one that does not (chunked) is read up to the cap
 * and the rest drained, never cancelled (src/lib/read-capped.ts says why).
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
  const read = await readCapped(request, limit, "drain", { fatal });
  if (read.ok) return read;
  if (read.reason === "oversize") return { ok: false, reason: "oversize", declared: false };
  return { ok: false, reason: read.reason, message: read.message };
}
