import { deadline } from "../lib/deadline";
import { raceAbort } from "../providers/failures";
import type { ChatProvider, OnText, ToolSpec } from "../providers/types";
import { isProviderError } from "../providers/types";
import type { AgentDefinition } from "../schemas/agent";
import type { HandoffContext, HistoryItem } from "../schemas/handoff";
import type { CallFacts } from "../schemas/run";
import type { ToolDefinition } from "../schemas/tool";
import type { TraceContext } from "../telemetry/trace-context";
import { type AgentTools, agentTools, withMemoryTools } from "./agent-tools";
import type { AgentTurnRequest, AgentTurnResult } from "./agent-turn";
import { systemPrompt, toChatMessages } from "./messages";

/** Building one agent turn, and carrying it to a model. */

/** A turn's deadline: the agent's `timeout_s`, else 60 s for a model or a remote A2A agent, 30 s for a webhook, 24 h for a person. */
export function turnTimeoutMs(agent: Pick<AgentDefinition, "kind" | "timeout_s">): number {
  const fallback = agent.kind === "human" ? 86_400 : agent.kind === "webhook" ? 30 : 60;
  return (agent.timeout_s ?? fallback) * 1000;
}

export interface TurnInput {
  run_id: string;
  agent: AgentDefinition;
  directory: ReadonlyMap<string, AgentDefinition>;
  /** The tenant's tool registry. */
  registry_tools: ReadonlyMap<string, ToolDefinition>;
  session: {
    id: string;
    handoff_stack: readonly string[];
    state: Record<string, unknown>;
    last_handoff_context: HandoffContext | null;
  };
  /**
   * The conversation as the agent's turn sends it: its view (messages.ts, `agentView`), after
   * its compaction and with large tool outputs cut (docs/memory.md).
   */
  view: readonly HistoryItem[];
  /** The model when the agent names none. */
  default_model: string;
  /** The session memory's prompt section, when it holds facts. */
  facts?: string | null;
  /** The memory's own tools this turn: `read_tool_output` (an output in view was cut), `remember` and `forget`. */
  memory_tools?: readonly ToolSpec[];
}

export interface TurnPlan {
  request: AgentTurnRequest;
  tools: AgentTools;
}

/** The handoff context the agent holds the session through, if any. */
export function heldContext(agent: string, session: TurnInput["session"]): HandoffContext | null {
  return session.last_handoff_context?.to_agent === agent ? session.last_handoff_context : null;
}

/** The request for the agent's next turn and the tools it is offered. */
export function planTurn(input: TurnInput): TurnPlan {
  const { agent, session } = input;
  const tools = withMemoryTools(
    agentTools({
      agent,
      directory: input.directory,
      stack: session.handoff_stack,
      state: session.state,
      registry_tools: input.registry_tools,
    }),
    input.memory_tools ?? [],
  );
  const context = heldContext(agent.name, session);
  const system = [systemPrompt(agent, context), input.facts].filter(Boolean).join("\n\n");
  return {
    tools,
    request: {
      session_id: session.id,
      run_id: input.run_id,
      agent: agent.name,
      model: agent.model ?? input.default_model,
      messages: [{ role: "system", content: system }, ...toChatMessages(input.view)],
      tools: tools.tools,
      context,
    },
  };
}

/** How a model turn is carried: streamed to `onText` when given, and stopped early by `signal`. */
export interface ModelCallOptions {
  /** The answer's text as it comes; the provider streams when it can (`streamed` says whether it did). */
  onText?: OnText;
  /** Aborts the call (a cancelled run); the deadline aborts it too. */
  signal?: AbortSignal;
  now?: () => number;
  /** The run's trace, as the agent's turn sends it (docs/observability.md, Propagation). */
  trace?: TraceContext;
}

/**
 * A model agent's turn through a provider, within `timeoutMs`. Never throws. With `onText`
 * the provider streams when it has `stream`, else answers whole (`streamed: false`). What the
 * provider said of its answer (finish reasons, the model, the first chunk's time) is in `facts`.
 */
export async function callModel(
  provider: ChatProvider,
  request: AgentTurnRequest,
  timeoutMs: number,
  options: ModelCallOptions = {},
): Promise<AgentTurnResult> {
  const now = options.now ?? (() => Date.now());
  const started = now();
  const { signal, clear } = deadline(timeoutMs);
  const cancel = options.signal;
  const combined = cancel ? anySignal(signal, cancel) : { signal, dispose: () => undefined };
  try {
    const req = {
      model: request.model,
      messages: request.messages,
      tools: request.tools,
      tool_choice: "auto" as const,
      ...(options.trace ? { trace: options.trace } : {}),
    };
    const work =
      options.onText && provider.stream
        ? provider.stream(req, combined.signal, options.onText)
        : provider.complete(req, combined.signal);
    const response = await raceAbort(work, combined.signal, provider.name);
    const streamed = options.onText ? (response.streamed ?? false) : undefined;
    const { streamed: _flag, finish_reasons, model, first_chunk_ms, ...answer } = response;
    const facts: CallFacts = {
      ...(finish_reasons ? { finish_reasons } : {}),
      ...(model ? { response_model: model } : {}),
      ...(first_chunk_ms === undefined ? {} : { first_chunk_ms }),
    };
    return {
      ok: true,
      response: answer,
      model: request.model,
      duration_ms: now() - started,
      ...(streamed === undefined ? {} : { streamed }),
      facts,
    };
  } catch (error) {
    const duration_ms = now() - started;
    if (cancel?.aborted)
      return { ok: false, code: "RUN_CANCELLED", message: "The run was cancelled during the model call.", duration_ms };
    if (isProviderError(error) && error.kind === "timeout")
      return {
        ok: false,
        code: "MODEL_TIMEOUT",
        message: `The model did not answer within ${timeoutMs} ms.`,
        duration_ms,
      };
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, code: "MODEL_ERROR", message: `The model call failed: ${message}`, duration_ms };
  } finally {
    combined.dispose();
    clear();
  }
}

/** A signal that aborts when either does (with the first one's reason). */
function anySignal(a: AbortSignal, b: AbortSignal): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const abortFrom = (source: AbortSignal) => () => controller.abort(source.reason);
  const onA = abortFrom(a);
  const onB = abortFrom(b);
  if (a.aborted) onA();
  else if (b.aborted) onB();
  a.addEventListener("abort", onA, { once: true });
  b.addEventListener("abort", onB, { once: true });
  return {
    signal: controller.signal,
    dispose: () => {
      a.removeEventListener("abort", onA);
      b.removeEventListener("abort", onB);
    },
  };
}
