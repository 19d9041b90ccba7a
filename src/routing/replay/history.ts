import { HISTORY_INPUT_BYTES, type RoutedInput } from "../../schemas/replay";
import type { RouteDecision } from "../../schemas/routing";

/** The start of `text` that fits `maxBytes` of UTF-8, never cutting a character in two. */
export function capUtf8(text: string, maxBytes: number): string {
  // A code unit takes at most 3 bytes (a surrogate pair, two units, takes 4): short texts fit as they are.
  if (text.length * 3 <= maxBytes) return text;
  const encoded = new TextEncoder().encode(text);
  if (encoded.byteLength <= maxBytes) return text;
  let end = maxBytes;
  // Back to the first byte of a character (continuation bytes are 10xxxxxx).
  while (end > 0 && (encoded[end]! & 0xc0) === 0x80) end--;
  return new TextDecoder().decode(encoded.subarray(0, end));
}

/** What the history keeps of one routed session: its input's start, and the decision. */
export function routedInput(
  sessionId: string,
  input: string,
  decision: Pick<RouteDecision, "agent" | "method" | "confidence" | "registry_version">,
  now: number,
): RoutedInput | null {
  if (decision.agent === null) return null;
  return {
    at: new Date(now).toISOString(),
    session_id: sessionId,
    input: capUtf8(input, HISTORY_INPUT_BYTES),
    agent: decision.agent,
    method: decision.method,
    confidence: decision.confidence,
    registry_version: decision.registry_version,
  };
}
