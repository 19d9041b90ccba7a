import type { Result } from "../errors";
import type { ChatMessage, ChatProvider } from "../providers/types";
import type { AgentTurnResult } from "../runtime/agent-turn";
import { systemPrompt } from "../runtime/messages";
import { callModel, turnTimeoutMs } from "../runtime/turn";
import type { AgentDefinition } from "../schemas/agent";
import type { TraceContext } from "../telemetry/trace-context";
import type { OutboundCall } from "./fetch";
import { callWebhookAgent } from "./webhook-agent";

/**
 * One turn of an agent on a single instruction, with no tools and no conversation: a
 * fan-out task, or a question another agent asked it. Carried by its executor (model or
 * webhook) within `timeoutMs` (at most the agent's own turn timeout). Never throws.
 */
export interface OneTurnInput {
  agent: AgentDefinition;
  instruction: string;
  session_id: string;
  /** What the executor sees as the run id (the task's or the call's). */
  run_id: string;
  timeoutMs: number;
  provider: Result<ChatProvider>;
  default_model: string;
  /** Resolves the address policy and delivery signing of a webhook agent's call (asked only for webhook agents). */
  outbound: () => Promise<OutboundCall>;
  /** The run's trace, sent on the model or webhook call (docs/observability.md, Propagation); none outside a run. */
  trace?: TraceContext | undefined;
}

export async function oneTurn(input: OneTurnInput): Promise<AgentTurnResult> {
  const { agent } = input;
  if (agent.kind === "human" || agent.kind === "a2a")
    return {
      ok: false,
      code: "AGENT_UNAVAILABLE",
      message: `'${agent.name}' is ${agent.kind === "human" ? "a person" : "a remote A2A agent"}; a one-turn task goes to a model or webhook agent.`,
      duration_ms: 0,
    };
  const timeoutMs = Math.min(input.timeoutMs, turnTimeoutMs(agent));
  const messages: ChatMessage[] = [
    { role: "system", content: systemPrompt(agent, null) },
    { role: "user", content: input.instruction },
  ];
  const request = {
    session_id: input.session_id,
    run_id: input.run_id,
    agent: agent.name,
    model: agent.model ?? input.default_model,
    messages,
    tools: [],
    context: null,
  };
  const trace = input.trace ? { trace: input.trace } : {};
  if (agent.kind === "webhook")
    return callWebhookAgent({ name: agent.name, endpoint: agent.endpoint! }, request, {
      outbound: { ...(await input.outbound()), ...trace },
      timeoutMs,
    });
  if (!input.provider.ok)
    return { ok: false, code: "DEPENDENCY_UNAVAILABLE", message: input.provider.error.message, duration_ms: 0 };
  return callModel(input.provider.value, request, timeoutMs, trace);
}
