import type { AuditScope } from "../audit/events";
import type { Actor, AuditRecord } from "../audit/record";
import { runStatusChanged } from "../audit/run-events";
import type { ErrorBody } from "../errors";
import { ulid } from "../lib/ulid";
import type { StoredError } from "../schemas/handoff";
import type { RouteDecision } from "../schemas/routing";
import {
  DEFAULT_MAX_TURNS,
  type Run,
  type RunPending,
  type RunStatus,
  type RunWarning,
  type TraceDetails,
  type TraceEvent,
  type TraceEventType,
} from "../schemas/run";
import { derivedRunTrace } from "../telemetry/propagation";
import type { AgentTurnResult } from "./agent-turn";

/**
 * A run's record and its transitions, pure (docs/runs.md, Running agents): a table over the run
 * statuses; each transition returns the next record and its audit record.
 */

/** Which status may follow which. Terminal statuses have no row. */
export const RUN_TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  running: ["completed", "failed", "awaiting_human", "awaiting_approval", "requires_action", "cancelled"],
  // A person's answer completes the run; an escalation nobody answered hands the turn back to the agent.
  awaiting_human: ["completed", "running", "failed", "cancelled"],
  // Every call decided (or denied by the alarm): the run goes on.
  awaiting_approval: ["running", "failed", "cancelled"],
  // The client's outputs resume it; none in time fail it.
  requires_action: ["running", "failed", "cancelled"],
  completed: [],
  failed: [],
  // Cancelled by the caller (POST …/runs/:id/cancel), or when its only listener went away mid-stream.
  cancelled: [],
};

/** What a running run is doing, recorded before it does it, so a restart knows what was under way. */
export const RUN_STEPS = ["turn", "tools", "handoff"] as const;
export type RunStep = (typeof RUN_STEPS)[number];

export const isActiveRun = (status: RunStatus): boolean => RUN_TRANSITIONS[status].length > 0;

/**
 * Whether a run's loop may carry on after an outside call: its session is still active and
 * the run still running. Either may have moved while the call was out (the session ended,
 * the run was cancelled or failed), and then what came back goes nowhere.
 */
export const mayContinue = (
  session: { status: string } | null | undefined,
  run: { status: RunStatus } | null | undefined,
): boolean => session?.status === "active" && run?.status === "running";

/** The statuses of a run that has not ended (one at a time per session). */
export const ACTIVE_RUN_STATUSES = (Object.keys(RUN_TRANSITIONS) as RunStatus[]).filter(isActiveRun);

/** Run ids carry their session, like handoff ids: `run_<ulid>_<session id>`. */
export function newRunId(sessionId: string, now: number): string {
  return `run_${ulid(now).toLowerCase()}_${sessionId}`;
}

const RUN_ID = /^run_[0-9a-z]{26}_(ses_[0-9a-z]{52})$/;

/** The session a run id belongs to, or null when the id is not one Relay makes. */
export function sessionOfRun(id: string): string | null {
  return RUN_ID.exec(id)?.[1] ?? null;
}

export function newRun(input: {
  id: string;
  session_id: string;
  agent: string;
  max_turns: number;
  now: number;
  /** The trace it belongs to (default: its own, derived from its id). */
  trace_id?: string;
}): Run {
  const at = new Date(input.now).toISOString();
  return {
    id: input.id,
    session_id: input.session_id,
    trace_id: input.trace_id ?? derivedRunTrace(input.id).trace_id,
    status: "running",
    agent: input.agent,
    turns: 0,
    max_turns: input.max_turns,
    output: null,
    output_agent: null,
    pending: null,
    warnings: [],
    handoffs: [],
    started_at: at,
    updated_at: at,
    ended_at: null,
    events: [],
  };
}

export interface RunChange {
  output?: string;
  output_agent?: string;
  error?: ErrorBody;
  pending?: RunPending | null;
  warnings?: RunWarning[];
}

/** One transition: the next record and its audit record, or null when the table refuses it. */
export function moveRun(
  run: Run,
  to: RunStatus,
  change: RunChange,
  scope: AuditScope,
  actor: Actor,
  now: number,
): { run: Run; record: AuditRecord } | null {
  if (!RUN_TRANSITIONS[run.status].includes(to)) return null;
  const at = new Date(now).toISOString();
  const next: Run = {
    ...run,
    status: to,
    updated_at: at,
    pending: change.pending ?? null,
    ended_at: isActiveRun(to) ? null : at,
  };
  if (change.output !== undefined) next.output = change.output;
  if (change.output_agent !== undefined) next.output_agent = change.output_agent;
  if (change.error) next.error = storedError(change.error);
  if (change.warnings) next.warnings = [...run.warnings, ...change.warnings];
  const details = { run_id: run.id, agent: run.agent, from: run.status, to, turns: run.turns };
  return {
    run: next,
    record: runStatusChanged(scope, actor, now, change.error ? { ...details, error_code: change.error.code } : details),
  };
}

function storedError(error: ErrorBody): StoredError {
  return error.details === undefined
    ? { code: error.code, message: error.message }
    : { code: error.code, message: error.message, details: error.details };
}

/**
 * The router's decision that gave a session its first agent, as the trace's first event.
 * It precedes every run, so its correlation id is the session's. `route_tiers` says what each
 * tier took (a decision made before the router timed its rule tier has no `rule_us`).
 */
export function routeTraceEvent(
  session_id: string,
  agent: string,
  now: number,
  decision: Pick<RouteDecision, "method" | "confidence" | "latency_us" | "rule_us" | "llm">,
): TraceEvent {
  const route_tiers: NonNullable<TraceDetails["route_tiers"]> = { llm_consulted: decision.llm !== undefined };
  if (decision.rule_us !== undefined) route_tiers.rule_us = decision.rule_us;
  if (decision.llm) route_tiers.llm_ms = decision.llm.duration_ms;
  return traceEvent(
    { id: session_id, session_id },
    "route",
    agent,
    now,
    { to_agent: agent, routing_method: decision.method, routing_confidence: decision.confidence, route_tiers },
    decision.latency_us / 1000,
  );
}

/** Who answers an agent's turn, as its trace events name it. */
export function executorOf(agent: { kind: string }): "model" | "webhook" | "a2a" {
  return agent.kind === "webhook" ? "webhook" : agent.kind === "a2a" ? "a2a" : "model";
}

/**
 * The details of a turn's call — an `llm_call` event, or the failed call of an `agent_error`
 * (docs/runs.md, Traces): who answered, the model asked, whether it streamed, the usage, and
 * what the answer said of itself (finish reasons, the model that answered, the first chunk's
 * time, a remote agent's method and task).
 */
export function callDetails(
  executor: TraceDetails["executor"],
  model: string,
  result: AgentTurnResult,
  more: TraceDetails = {},
): TraceDetails {
  const details: TraceDetails = { executor, model, ...more, ...result.facts };
  if (!result.ok) return details;
  if (result.streamed !== undefined) details.streamed = result.streamed;
  const usage = result.response.usage;
  if (usage)
    details.tokens = { prompt: usage.prompt_tokens, completion: usage.completion_tokens, total: usage.total_tokens };
  return details;
}

/** One trace event of a run (docs/runs.md, Traces). */
export function traceEvent(
  run: Pick<Run, "id" | "session_id">,
  type: TraceEventType,
  agent: string,
  now: number,
  details: TraceDetails,
  duration_ms = 0,
  error: string | null = null,
): TraceEvent {
  return {
    event_id: `evt_${ulid(now).toLowerCase()}`,
    event_type: type,
    timestamp: new Date(now).toISOString(),
    session_id: run.session_id,
    agent_name: agent,
    correlation_id: run.id,
    details,
    duration_ms: Math.max(0, Math.round(duration_ms)),
    error,
  };
}

/** Tool arguments as the trace shows them: parsed when they are JSON, else the text (cut). */
export function traceArgs(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text.slice(0, 1000);
  }
}

/** A session's run limit: `max_turns` in its metadata (1–100), else DEFAULT_MAX_TURNS. */
export function maxTurnsOf(metadata: Readonly<Record<string, unknown>>): number {
  const value = metadata.max_turns;
  return typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= 100 ? value : DEFAULT_MAX_TURNS;
}
