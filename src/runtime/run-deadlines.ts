import { peerQueryTimeoutS } from "../collaboration/peer-query";
import type { AgentDefinition } from "../schemas/agent";
import type { WorkCall } from "../schemas/run";
import type { ToolDefinition } from "../schemas/tool";
import { fanOutCallTasks } from "./fan-out-tool";
import { turnTimeoutMs } from "./turn";

/**
 * How long each kind of wait in a run lasts, and when a run a restart interrupted is resumed.
 * One place, so the watchdog, the pauses and the callers that wait for a run agree.
 */

/** How long a request waits for its run before answering with the run still running (202). */
export const RUN_WAIT_MS = 25_000;
/** Escalations wait this long for a person before the agent is told nobody answered. */
export const ESCALATION_TIMEOUT_MS = 24 * 3_600_000;
/** How long a run in requires_action waits for the client's tool outputs (OpenAI's runs wait 10 minutes too). */
export const TOOL_OUTPUTS_TIMEOUT_MS = 10 * 60_000;

/**
 * The watchdog: before each step a run records when it would be resumed if its instance died
 * — the step's own deadline (a model or webhook turn's timeout, the longest of its calls')
 * plus this margin for the step's own writes. So a run a restart interrupted waits no longer
 * than the step it was in could have taken, and the alarm resumes it with no request needed.
 */
export const RESUME_MARGIN_MS = 5_000;
/** A handoff step: the session's own flow, whose outside calls (capacity shards) have their own deadlines. */
export const HANDOFF_STEP_MS = 15_000;
/** Past a fan-out's longest task, its own deadline timer ends it (see the fan-out feature). */
const FAN_OUT_MARGIN_MS = 10_000;
/** A message to another agent that waits for no answer (notify, broadcast): one collaboration call. */
const MESSAGE_CALL_MS = 15_000;

/** When the watchdog resumes a run whose step, started `now`, may take `stepMs`. */
export const resumeAt = (now: number, stepMs = 0): number => now + stepMs + RESUME_MARGIN_MS;

/** The deadline of a turn of this agent (its model call or webhook delivery). */
export const turnStepMs = (agent: Pick<AgentDefinition, "kind" | "timeout_s">): number => turnTimeoutMs(agent);

/** What a call's deadline depends on: the registry's tools and agents. */
export interface CallDeadlines {
  tools: ReadonlyMap<string, Pick<ToolDefinition, "timeout_s">>;
  agents: ReadonlyMap<string, Pick<AgentDefinition, "kind" | "timeout_s">>;
}

/** The deadline of one call Relay runs in a turn's tools step. */
export function callStepMs(call: Pick<WorkCall, "kind" | "name" | "arguments">, registry: CallDeadlines): number {
  switch (call.kind) {
    case "http":
      return (registry.tools.get(call.name)?.timeout_s ?? 0) * 1000;
    case "mcp":
      // The server's connection and its call, each within the tool's timeout.
      return (registry.tools.get(call.name)?.timeout_s ?? 0) * 2000;
    case "ask": {
      const peer = registry.agents.get(askedAgent(call.arguments) ?? "");
      return peer ? peerQueryTimeoutS(peer) * 1000 : MESSAGE_CALL_MS;
    }
    case "fan_out": {
      const tasks = fanOutCallTasks(call.arguments)?.tasks ?? [];
      return Math.max(0, ...tasks.map((t) => t.timeout_s * 1000)) + FAN_OUT_MARGIN_MS;
    }
    default:
      return MESSAGE_CALL_MS;
  }
}

/** A tools step runs its calls side by side: its deadline is the longest of theirs. */
export const callsStepMs = (calls: readonly Pick<WorkCall, "kind" | "name" | "arguments">[], registry: CallDeadlines) =>
  Math.max(0, ...calls.map((c) => callStepMs(c, registry)));

function askedAgent(args: string): string | null {
  try {
    const parsed = JSON.parse(args || "{}") as { agent?: unknown };
    return typeof parsed.agent === "string" ? parsed.agent : null;
  } catch {
    return null;
  }
}
