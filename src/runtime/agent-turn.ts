import type { ErrorCode } from "../errors/codes";
import type { ChatMessage, ChatResponse, ToolSpec } from "../providers/types";
import type { HandoffContext } from "../schemas/handoff";

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
 * `streamed`, when streaming was asked for: whether the text came in pieces.
 */
export type AgentTurnResult =
  | { ok: true; response: ChatResponse; model: string; duration_ms: number; streamed?: boolean }
  | { ok: false; code: ErrorCode; message: string; duration_ms: number };
