import type { Env } from "../../../src/env";
import type { AgentTurnRequest, AgentTurnResult } from "../../../src/runtime/agent-turn";
import { callModel, turnTimeoutMs } from "../../../src/runtime/turn";
import { agentSecret, callWebhookAgent } from "../../../src/runtime/webhook-agent";
import type { AgentDefinition } from "../../../src/schemas/agent";
import type { AgentModels } from "../../../src/services/agent-models";

/** Sends one turn to whoever executes the agent: its webhook, or the model provider, within the turn's deadline. */
export async function executeTurn(
  env: Env,
  agent: AgentDefinition,
  request: AgentTurnRequest,
  models: AgentModels,
): Promise<AgentTurnResult> {
  const timeout = turnTimeoutMs(agent);
  if (agent.kind === "webhook") {
    return callWebhookAgent({ name: agent.name, endpoint: agent.endpoint! }, request, {
      secret: agentSecret(env as unknown as Record<string, unknown>, agent.name),
      timeoutMs: timeout,
    });
  }
  if (!models.provider.ok)
    return {
      ok: false as const,
      code: "DEPENDENCY_UNAVAILABLE" as const,
      message: models.provider.error.message,
      duration_ms: 0,
    };
  return callModel(models.provider.value, request, timeout);
}
