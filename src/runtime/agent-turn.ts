import type { ErrorCode } from "../errors/codes";
import type { ChatMessage, ChatResponse, ToolSpec } from "../providers/types";
import type { HandoffContext } from "../schemas/handoff";
import type { CallFacts } from "../schemas/run";

/**
 * One turn of one agent, whoever executes it (a model provider, the user's webhook): the
 * messages and tools going out, and what came back. The run loop builds the request and
 * interprets the response; executors only carry it.
 */
export interface AgentTurnRequest {
  session_id: string;
  run_id: string;
  agent: string;
  /** The model to ask (model agents). */
  model: string;
  /** System (instructions + handoff preamble) first, then the filtered conversation. */
  messages: ChatMessage[];
  /** Every tool the agent may call this turn; `transfer_to_*`, `return_to_*`, `escalate_to_human` among them. */
  tools: ToolSpec[];
  /** What the agent was handed, when it holds the session through a handoff. */
  context: HandoffContext | null;
}

/**
 * A turn's result: the executor's answer (text and/or tool calls), or why there is none.
 * `streamed`, when streaming was asked for: whether the text came in pieces. `facts`: what
 * the answer said of itself (finish reasons, the model that answered, the first chunk's
 * time, a remote agent's task), for the call's trace event; a failed remote call keeps
 * what it knew of its task.
 */
export type AgentTurnResult =
  | { ok: true; response: ChatResponse; model: string; duration_ms: number; streamed?: boolean; facts?: CallFacts }
  | { ok: false; code: ErrorCode; message: string; duration_ms: number; facts?: CallFacts };

/**
 * The result with `redact` applied to every text a remote wrote into it — the answer, its
 * tool calls' arguments, a failure's message, its task's id — so a value Relay sent and the remote echoed
 * (src/outbound/redact.ts) reaches no message, error or trace.
 */
export function redactTurn<T extends AgentTurnResult>(result: T, redact: (text: string) => string): T {
  const task = result.facts?.a2a?.task_id;
  // A remote task's id is the remote's text too, and goes to the trace.
  const facts =
    task === undefined || !result.facts?.a2a
      ? {}
      : { facts: { ...result.facts, a2a: { ...result.facts.a2a, task_id: redact(task) } } };
  if (!result.ok) return { ...result, ...facts, message: redact(result.message) };
  const { content, tool_calls } = result.response;
  return {
    ...result,
    ...facts,
    response: {
      ...result.response,
      content: content === null ? null : redact(content),
      tool_calls: tool_calls.map((call) => ({ ...call, arguments: redact(call.arguments) })),
    },
  };
}
