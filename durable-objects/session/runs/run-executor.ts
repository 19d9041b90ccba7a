import type { Env } from "../../../src/env";
import { callA2aAgent } from "../../../src/outbound/a2a-agent";
import { callWebhookAgent, turnDeliveryId } from "../../../src/outbound/webhook-agent";
import type { AgentTurnRequest, AgentTurnResult } from "../../../src/runtime/agent-turn";
import { callModel, turnTimeoutMs } from "../../../src/runtime/turn";
import type { AgentDefinition } from "../../../src/schemas/agent";
import type { AgentModels } from "../../../src/services/agent-models";
import { agentOutbound } from "../../../src/services/outbound";
import type { TraceContext } from "../../../src/telemetry/trace-context";
import type { RemoteThreads } from "./remote-threads";
import type { Writing } from "./run-streams";

/** One turn of a run, as executeTurn sends it. */
export interface TurnToExecute {
  agent: AgentDefinition;
  request: AgentTurnRequest;
  models: AgentModels;
  /** The run's turn number: the webhook's delivery id and the remote agent's message id derive from it. */
  turn: number;
  tenant: string;
  /** Where a streamed answer's text goes (a webhook's reply comes whole). */
  writing?: Pick<Writing, "onText" | "signal"> | null | undefined;
  /** The session's threads with remote A2A agents. */
  threads?: RemoteThreads | undefined;
  /** The run's trace, as the turn's span sends it. */
  trace?: TraceContext | undefined;
}

/**
 * Sends turn number `turn` of a run to whoever executes the agent: its webhook (one
 * delivery id per turn number), a remote A2A agent (one message id per turn number, in the
 * session's thread with it), or the model provider, within the turn's deadline. A model or
 * remote agent's turn streams its text to `writing` when given (a webhook's reply comes whole).
 * Each call carries `trace`, the run's trace as the turn's span sends it.
 */
export async function executeTurn(
  env: Env,
  { agent, request, models, turn, tenant, writing, threads, trace }: TurnToExecute,
): Promise<AgentTurnResult & { input_required?: boolean }> {
  const timeout = turnTimeoutMs(agent);
  const traced = trace ? { trace } : {};
  if (agent.kind === "a2a") {
    const result = await callA2aAgent(
      { name: agent.name, card_url: agent.card_url!, signing: agent.signing },
      request,
      {
        outbound: { ...(await agentOutbound(env, tenant, agent)), ...traced },
        timeoutMs: timeout,
        thread: threads?.get(agent.name) ?? { context_id: null, task_id: null, handoff_id: null },
        messageId: turnDeliveryId(request.run_id, turn),
        ...(writing ? { onText: writing.onText, signal: writing.signal } : {}),
      },
    );
    if (result.thread) threads?.save(agent.name, result.thread, Date.now());
    return result;
  }
  if (agent.kind === "webhook") {
    return callWebhookAgent({ name: agent.name, endpoint: agent.endpoint! }, request, {
      outbound: { ...(await agentOutbound(env, tenant, agent)), ...traced },
      timeoutMs: timeout,
      id: turnDeliveryId(request.run_id, turn),
    });
  }
  if (!models.provider.ok)
    return {
      ok: false as const,
      code: "DEPENDENCY_UNAVAILABLE" as const,
      message: models.provider.error.message,
      duration_ms: 0,
    };
  return callModel(
    models.provider.value,
    request,
    timeout,
    writing ? { onText: writing.onText, signal: writing.signal, ...traced } : traced,
  );
}
