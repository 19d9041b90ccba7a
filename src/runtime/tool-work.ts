import type { AgentDefinition } from "../schemas/agent";
import type { HistoryItem } from "../schemas/handoff";
import type { ApprovalDecision } from "../schemas/inbox";
import {
  CALL_RUNNER,
  type PendingCall,
  type RunPending,
  type TurnWork,
  type WorkCall,
  type WorkHandoff,
} from "../schemas/run";
import type { TurnDecision } from "./interpret";

/**
 * The tool calls of one model response, carried out step by step (docs/runs.md, Tools), pure:
 * `planWork` turns a response into work, `nextEffect` says what the run does next, and
 * the other functions are the transitions the run's object records. Order: every approval
 * is asked first (nothing runs before the person has said yes or no, and a handoff beside
 * a gated tool waits too), then what Relay runs (http tools, messages to other agents),
 * then client tools are handed to the client, and the handoff (or escalation) comes last, so the
 * target sees every output.
 */

export type WorkEffect =
  /** Calls whose approval nobody was asked for yet: open an inbox item each, pause. */
  | { type: "ask_approval"; calls: PendingCall[] }
  /** Approvals are asked and not all decided: stay paused. */
  | { type: "await_approval" }
  /** Calls Relay runs now: http tools, and messages to other agents. */
  | { type: "run_calls"; calls: WorkCall[] }
  /** client tools: pause in requires_action until the client posts their outputs. */
  | { type: "await_client"; calls: WorkCall[] }
  | { type: "handoff"; handoff: WorkHandoff }
  /** Everything is answered: the agent takes its next turn. */
  | { type: "done" };

const toPending = (c: PendingCall): PendingCall => ({ id: c.id, name: c.name, arguments: c.arguments });

/** The work a response leaves (null: nothing beyond the outputs already known). */
export function planWork(agent: AgentDefinition, decision: TurnDecision): TurnWork | null {
  const gated = new Set(agent.tools.confirmation.require);
  const calls: WorkCall[] = decision.calls.map(({ call, kind }) => ({
    ...toPending(call),
    kind,
    approval: gated.has(call.name) ? "pending" : "none",
    inbox_id: null,
    done: false,
  }));
  const action = decision.action;
  let handoff: WorkHandoff | null = null;
  if (action.type === "escalate") {
    handoff = {
      ...toPending(action.call),
      type: "escalate",
      target: null,
      reason: action.reason,
      approval: "none",
      inbox_id: null,
    };
  } else if (action.type === "handoff") {
    const gatedHandoff = action.binding.kind === "transfer" && action.binding.entry.requires_approval;
    handoff = {
      ...toPending(action.call),
      type: action.binding.kind,
      target: action.binding.target,
      reason: action.reason,
      ...(action.input === undefined ? {} : { input: action.input }),
      approval: gatedHandoff ? "pending" : "none",
      inbox_id: null,
    };
  }
  if (calls.length === 0 && handoff === null) return null;
  return { agent: agent.name, calls, handoff, hidden_calls: decision.ignored_call_ids };
}

const runnable = (c: WorkCall) => !c.done && (c.approval === "none" || c.approval === "approved");

export function nextEffect(work: TurnWork): WorkEffect {
  const gated: { approval: string; inbox_id: string | null; call: PendingCall }[] = [
    ...work.calls.map((c) => ({ approval: c.approval, inbox_id: c.inbox_id, call: toPending(c) })),
    ...(work.handoff
      ? [{ approval: work.handoff.approval, inbox_id: work.handoff.inbox_id, call: toPending(work.handoff) }]
      : []),
  ].filter((g) => g.approval === "pending");
  const unasked = gated.filter((g) => g.inbox_id === null);
  if (unasked.length > 0) return { type: "ask_approval", calls: unasked.map((g) => g.call) };
  if (gated.length > 0) return { type: "await_approval" };
  const relay = work.calls.filter((c) => CALL_RUNNER[c.kind] === "relay" && runnable(c));
  if (relay.length > 0) return { type: "run_calls", calls: relay };
  const client = work.calls.filter((c) => CALL_RUNNER[c.kind] === "client" && runnable(c));
  if (client.length > 0) return { type: "await_client", calls: client };
  if (work.handoff) return { type: "handoff", handoff: work.handoff };
  return { type: "done" };
}

/** The work once the person for each call was asked (call id → inbox item id). */
export function withApprovalsAsked(work: TurnWork, asked: ReadonlyMap<string, string>): TurnWork {
  return {
    ...work,
    calls: work.calls.map((c) => (asked.has(c.id) ? { ...c, inbox_id: asked.get(c.id)! } : c)),
    handoff:
      work.handoff && asked.has(work.handoff.id)
        ? { ...work.handoff, inbox_id: asked.get(work.handoff.id)! }
        : work.handoff,
  };
}

/** The work once these calls' outputs are in the history. */
export function withCallsDone(work: TurnWork, ids: ReadonlySet<string>): TurnWork {
  return { ...work, calls: work.calls.map((c) => (ids.has(c.id) ? { ...c, done: true } : c)) };
}

/** Why a call was not approved: a person said no, or nobody answered in time. */
export type Denial = { by: "person"; reason?: string } | { by: "timeout"; timeout_s: number };

function deniedOutput(agent: string, call: PendingCall, denial: Denial): HistoryItem {
  const why =
    denial.by === "person"
      ? `a person denied it${denial.reason ? `: ${denial.reason}` : "."}`
      : `nobody approved it within ${denial.timeout_s} s.`;
  const what =
    call.name.startsWith("transfer_to_") || call.name.startsWith("return_to_") ? "The handoff was not made" : "Not run";
  return {
    role: "tool",
    agent,
    type: "tool_output",
    tool_name: call.name,
    tool_call_id: call.id,
    content: `Error: ${what}: ${why}`,
  };
}

/**
 * A decision on the call an inbox item asked about: the next work, and the output the
 * model sees when it was denied. Null when the item is not one of this work's open questions.
 */
export function decideApproval(
  work: TurnWork,
  inboxId: string,
  decision: ApprovalDecision,
  denial: Denial,
): { work: TurnWork; output: HistoryItem | null; call: PendingCall } | null {
  const state = decision === "approve" ? ("approved" as const) : ("denied" as const);
  const call = work.calls.find((c) => c.inbox_id === inboxId && c.approval === "pending");
  if (call) {
    const output = state === "denied" ? deniedOutput(work.agent, call, denial) : null;
    return {
      work: {
        ...work,
        calls: work.calls.map((c) => (c === call ? { ...c, approval: state, done: c.done || state === "denied" } : c)),
      },
      output,
      call: toPending(call),
    };
  }
  const handoff = work.handoff;
  if (handoff && handoff.inbox_id === inboxId && handoff.approval === "pending") {
    return state === "approved"
      ? { work: { ...work, handoff: { ...handoff, approval: "approved" } }, output: null, call: toPending(handoff) }
      : {
          work: { ...work, handoff: null },
          output: deniedOutput(work.agent, handoff, denial),
          call: toPending(handoff),
        };
  }
  return null;
}

/** What the API shows of a run paused on approvals. */
export function approvalPending(work: TurnWork, expires_at: string): Extract<RunPending, { kind: "approval" }> {
  const asked = [...work.calls, ...(work.handoff ? [work.handoff] : [])].filter(
    (c): c is typeof c & { inbox_id: string } => c.inbox_id !== null,
  );
  return {
    kind: "approval",
    agent: work.agent,
    approvals: asked.map((c) => ({
      inbox_id: c.inbox_id,
      tool_call: toPending(c),
      decision: c.approval === "approved" ? "approve" : c.approval === "denied" ? "deny" : null,
    })),
    expires_at,
  };
}

/**
 * What an approval asks, as the audit trail and the tenant-wide inbox list keep it: the agent and
 * the tool, never the call's arguments (the item itself, live in its session, has the whole prompt).
 */
export function approvalSummary(agent: string, tool: string): string {
  return `'${agent}' wants to call '${tool}'.`;
}

/** Fills `{{agent}}`, `{{tool}}`, `{{arguments}}` and `{{arguments.<path>}}` (unknown paths stay empty). */
export function approvalPrompt(agent: AgentDefinition, call: PendingCall): string {
  let args: unknown;
  try {
    args = JSON.parse(call.arguments || "{}");
  } catch {
    args = call.arguments;
  }
  const template =
    agent.tools.confirmation.prompt_template ?? "'{{agent}}' wants to call '{{tool}}' with {{arguments}}.";
  return template.replace(/\{\{\s*([A-Za-z0-9_.]+)\s*\}\}/g, (_all, key: string) => {
    if (key === "agent") return agent.name;
    if (key === "tool") return call.name;
    if (key === "arguments") return JSON.stringify(args);
    if (!key.startsWith("arguments.")) return "";
    let value: unknown = args;
    for (const part of key.slice("arguments.".length).split(".")) {
      value =
        value !== null && typeof value === "object" && Object.hasOwn(value, part)
          ? (value as Record<string, unknown>)[part]
          : undefined;
    }
    return value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value);
  });
}
