import { deadline } from "../lib/deadline";
import { raceAbort } from "../providers/failures";
import type { ChatProvider } from "../providers/types";
import { isProviderError } from "../providers/types";
import type { AgentDefinition } from "../schemas/agent";
import type { HandoffContext } from "../schemas/handoff";
import type { ToolDefinition } from "../schemas/tool";
import { type AgentTools, agentTools } from "./agent-tools";
import type { AgentTurnRequest, AgentTurnResult } from "./agent-turn";
import { agentView, type SequencedItem, systemPrompt, toChatMessages } from "./messages";

/** Building one agent turn, and carrying it to a model. */

/** A turn's deadline: the agent's `timeout_s`, else 60 s for a model, 30 s for a webhook, 24 h for a person. */
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
  history: readonly SequencedItem[];
  /** The model when the agent names none. */
  default_model: string;
}

export interface TurnPlan {
  request: AgentTurnRequest;
  tools: AgentTools;
}

/** The request for the agent's next turn and the tools it is offered. */
export function planTurn(input: TurnInput): TurnPlan {
  const { agent, session } = input;
  const tools = agentTools({
    agent,
    directory: input.directory,
    stack: session.handoff_stack,
    state: session.state,
    registry_tools: input.registry_tools,
  });
  const context = session.last_handoff_context?.to_agent === agent.name ? session.last_handoff_context : null;
  const view = agentView(agent.name, input.history, context);
  return {
    tools,
    request: {
      session_id: session.id,
      run_id: input.run_id,
      agent: agent.name,
      model: agent.model ?? input.default_model,
      messages: [{ role: "system", content: systemPrompt(agent, context) }, ...toChatMessages(view)],
      tools: tools.tools,
      context,
    },
  };
}

/** A model agent's turn through a provider, within `timeoutMs`. Never throws. */
export async function callModel(
  provider: ChatProvider,
  request: AgentTurnRequest,
  timeoutMs: number,
  now: () => number = () => Date.now(),
): Promise<AgentTurnResult> {
  const started = now();
  const { signal, clear } = deadline(timeoutMs);
  try {
    const response = await raceAbort(
      provider.complete(
        { model: request.model, messages: request.messages, tools: request.tools, tool_choice: "auto" },
        signal,
      ),
      signal,
      provider.name,
    );
    return { ok: true, response, model: request.model, duration_ms: now() - started };
  } catch (error) {
    const duration_ms = now() - started;
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
    clear();
  }
}
