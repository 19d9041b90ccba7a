import type { InboxItem } from "../../schemas/inbox";
import type { LiveEvent } from "../../schemas/live";
import type { Run } from "../../schemas/run";

/**
 * A run as an MCP tool answers it (docs/mcp-server.md, send_message), pure: who answered and
 * what, the handoffs the run took, and what a paused run waits for — with the inbox ids
 * `answer_inbox` takes.
 */

/** One handoff a run took: from which agent to which (null: back to the agent that handed over), and why. */
export interface TakenHandoff {
  from: string;
  to: string | null;
  reason: string | null;
}

/** What a paused run waits for, with what answers it. */
export type Waiting =
  | { kind: "approval"; agent: string; approvals: { inbox_id: string; tool: string; arguments: string }[] }
  | { kind: "human"; agent: string; inbox_id: string }
  | { kind: "input"; agent: string }
  | { kind: "client_tools"; agent: string; tools: string[] };

export interface RunAnswer {
  session_id: string;
  run_id: string;
  status: Run["status"];
  /** The agent whose turn it is, or was when the run ended. */
  agent: string;
  /** The agent that gave the final answer (completed runs), else null. */
  answered_by: string | null;
  output: string | null;
  handoffs: TakenHandoff[];
  waiting_for: Waiting | null;
  error: { code: string; message: string } | null;
  /** Every run status but `running` is where the run stopped or paused; `running` goes on without the caller. */
  still_running: boolean;
  [key: string]: unknown;
}

/** The handoffs a run's trace records as taken (a refused handoff call has its error code), in order. */
export function takenHandoffs(run: Pick<Run, "events">): TakenHandoff[] {
  return run.events
    .filter((e) => e.event_type === "handoff" && e.error === null)
    .map((e) => ({
      from: e.details.from_agent ?? e.agent_name,
      to: e.details.to_agent ?? null,
      reason: e.details.handoff_reason ?? null,
    }));
}

function waitingOf(run: Run): Waiting | null {
  const pending = run.pending;
  if (!pending) return null;
  switch (pending.kind) {
    case "approval":
      return {
        kind: "approval",
        agent: pending.agent,
        approvals: pending.approvals
          .filter((a) => a.decision === null)
          .map((a) => ({ inbox_id: a.inbox_id, tool: a.tool_call.name, arguments: a.tool_call.arguments })),
      };
    case "human":
      return { kind: "human", agent: pending.agent, inbox_id: pending.inbox_id };
    case "input":
      return { kind: "input", agent: pending.agent };
    case "client_tools":
      return { kind: "client_tools", agent: pending.agent, tools: pending.tool_calls.map((c) => c.name) };
  }
}

/** The run as a tool's answer. */
export function runAnswer(run: Run): RunAnswer {
  return {
    session_id: run.session_id,
    run_id: run.id,
    status: run.status,
    agent: run.agent,
    answered_by: run.output_agent,
    output: run.output,
    handoffs: takenHandoffs(run),
    waiting_for: waitingOf(run),
    error: run.error ? { code: run.error.code, message: run.error.message } : null,
    still_running: run.status === "running",
  };
}

/** Whether a run's answer is a tool failure: it failed or was cancelled (its error's code says why). */
export const runFailed = (run: Pick<Run, "status">): boolean => run.status === "failed" || run.status === "cancelled";

/** An inbox item as `answer_inbox` shows it. */
export function inboxAnswerItem(item: InboxItem) {
  return {
    id: item.id,
    kind: item.kind,
    status: item.status,
    agent: item.agent,
    decision: item.decision,
    reply: item.reply,
    resolved_by: item.resolved_by,
  };
}

/**
 * A live event as a progress message (null: not worth one): the moments a person watching
 * the run would want named — an agent starting, a tool called, a handoff, a pause, the end.
 */
export function progressMessage(event: Pick<LiveEvent, "type" | "data">): string | null {
  const data = (event.data ?? {}) as Record<string, unknown>;
  const details = (data.details ?? {}) as Record<string, unknown>;
  const agent = typeof data.agent_name === "string" ? data.agent_name : null;
  switch (event.type) {
    case "run_started":
      return "run started";
    case "agent_started":
      return agent ? `${agent} is working` : "an agent is working";
    case "tool_call":
      return typeof details.tool_name === "string" ? `${agent ?? "agent"} called ${details.tool_name}` : null;
    case "handoff":
      return typeof details.to_agent === "string"
        ? `handed off from ${String(details.from_agent ?? agent ?? "?")} to ${details.to_agent}`
        : null;
    case "approval_required":
      return "waiting for an approval";
    case "run_paused":
      return "run paused";
    case "run_completed":
      return "run completed";
    case "run_failed":
      return "run failed";
    default:
      return null;
  }
}
