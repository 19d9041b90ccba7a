import { deadline } from "../lib/deadline";
import { raceAbort } from "../providers/failures";
import type { ChatMessage, ChatProvider, TokenUsage } from "../providers/types";
import { isProviderError } from "../providers/types";
import type { TraceContext } from "../telemetry/trace-context";

/** What a summary call came to: the summary's text, or why there is none. */
export type SummaryResult =
  | { ok: true; content: string; usage?: TokenUsage; duration_ms: number }
  | { ok: false; code: "MODEL_TIMEOUT" | "MODEL_ERROR"; message: string; duration_ms: number };

/** How a summary call is made besides its request. */
export interface SummaryCallOptions {
  /** The run's trace, as the turn the summary is made for sends it (docs/observability.md, Propagation). */
  trace?: TraceContext | undefined;
  now?: () => number;
}

/**
 * Asks a model for a compaction's summary (docs/memory.md, Compaction) within `timeoutMs`: no
 * tools (`tool_choice: "none"`, which the local provider answers with an extractive digest).
 * Never throws.
 */
export async function callSummary(
  provider: ChatProvider,
  model: string,
  messages: ChatMessage[],
  timeoutMs: number,
  { trace, now = Date.now }: SummaryCallOptions = {},
): Promise<SummaryResult> {
  const started = now();
  const { signal, clear } = deadline(timeoutMs);
  try {
    const request = { model, messages, tools: [], tool_choice: "none" as const, ...(trace ? { trace } : {}) };
    const work = provider.complete(request, signal);
    const response = await raceAbort(work, signal, provider.name);
    const content = (response.content ?? "").trim();
    if (content === "")
      return {
        ok: false,
        code: "MODEL_ERROR",
        message: "The model wrote an empty summary.",
        duration_ms: now() - started,
      };
    return { ok: true, content, ...(response.usage ? { usage: response.usage } : {}), duration_ms: now() - started };
  } catch (error) {
    const duration_ms = now() - started;
    if (isProviderError(error) && error.kind === "timeout")
      return {
        ok: false,
        code: "MODEL_TIMEOUT",
        message: `The summary took longer than ${timeoutMs} ms.`,
        duration_ms,
      };
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, code: "MODEL_ERROR", message: `The summary call failed: ${message}`, duration_ms };
  } finally {
    clear();
  }
}
