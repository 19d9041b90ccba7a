import * as z from "zod";
import type { AuditScope } from "../audit/events";
import { type HandoffAuditExtra, type HandoffSubject, handoffTransitioned } from "../audit/handoff-events";
import type { Actor, AuditRecord } from "../audit/record";
import { type ErrorBody, err, ok, type Result } from "../errors";
import { ulid } from "../lib/ulid";
import { Handoff, type HandoffContext, type HandoffRequest, type StoredError } from "../schemas/handoff";
import type { InFlightHandoff } from "../schemas/session";
import { isSessionId } from "../sessions/ids";
import type { SessionRecord } from "../sessions/model";
import { ValidatedHandoff } from "./plan";
import { type HandoffCommandInput, type HandoffEffect, initiate, transition } from "./state-machine";
import { DEFAULT_MAX_DEPTH } from "./validate";

/**
 * A handoff as the session stores it, and how one command moves it: `transition()`
 * decides, `advance` applies its result to the record (status, transitions, audit
 * record). No I/O: the flow writes the outcome in its own transaction.
 */

/** What a handoff does next, recorded before it does it, so a restart knows what was under way. */
export const HandoffStep = z.enum(["take_lease", "activate"]);
export type HandoffStep = z.infer<typeof HandoffStep>;

/** A handoff as stored: the API record plus what the flow needs to resume it. */
export const HandoffRow = z.object({
  record: Handoff,
  step: HandoffStep.nullable(),
  /** Set once validation passed. */
  plan: ValidatedHandoff.nullable(),
  /** The target's max_concurrent_sessions (null: no limit, no lease). */
  capacity: z.number().int().positive().nullable(),
  /** The target's lease, once granted. */
  lease: z.object({ lease_id: z.string(), fencing_token: z.number().int() }).nullable(),
  /** The immediate policy ended the source's turn; a rollback gives it back. */
  interrupted: z.boolean(),
  /** Tool calls kept out of the target's history (a run's ignored handoff calls). */
  hidden_calls: z.array(z.string()).default([]),
});
export type HandoffRow = z.infer<typeof HandoffRow>;

/**
 * Handoff ids carry their session: `hof_<ulid>_<session id>`. The ULID sorts them by
 * creation (the history index pages by id) and the session part lets `GET /v1/handoffs/:id`
 * reach the session's object directly, with read-your-writes, without a D1 lookup.
 */
export function newHandoffId(sessionId: string, now: number): string {
  return `hof_${ulid(now).toLowerCase()}_${sessionId}`;
}

const HANDOFF_ID = /^hof_([0-9a-z]{26})_(ses_[0-9a-z]{52})$/;

/** The session a handoff id belongs to, or null when the id is not one Relay makes. */
export function sessionOfHandoff(id: string): string | null {
  const session = HANDOFF_ID.exec(id)?.[2];
  return session !== undefined && isSessionId(session) ? session : null;
}

/** Who did it, and when: what every step's audit records share; and whose lease the session holds. */
export interface StepContext {
  scope: AuditScope;
  actor: Actor;
  now: number;
  /** The agent holding the session's capacity lease, if any. */
  leased_agent: string | null;
}

export function subjectOf(record: Handoff): HandoffSubject {
  return {
    id: record.id,
    source: record.source,
    target: record.target,
    mode: record.mode,
    policy: record.policy,
    created_at: record.created_at,
  };
}

/** A new handoff row, `initiated`, with its creation audit record. */
export function newHandoff(
  id: string,
  sessionId: string,
  request: HandoffRequest,
  ctx: StepContext,
  idempotencyKey?: string,
  requestedBy?: { run_id: string; tool_name: string },
): { row: HandoffRow; records: AuditRecord[] } {
  const at = new Date(ctx.now).toISOString();
  const record: Handoff = {
    id,
    session_id: sessionId,
    status: "initiated",
    mode: request.mode,
    policy: request.policy,
    source: request.source_agent,
    target: request.mode === "transfer" ? (request.target_agent ?? null) : null,
    request,
    context: null,
    created_at: at,
    updated_at: at,
    transitions: [{ from: null, to: "initiated", at }],
  };
  if (idempotencyKey !== undefined) record.idempotency_key = idempotencyKey;
  const start = initiate();
  const audit = start.effects[0]!;
  const records =
    audit.type === "audit"
      ? [
          handoffTransitioned(ctx.scope, ctx.actor, ctx.now, subjectOf(record), audit, {
            request_reason: request.reason,
            ...requestedBy,
          }),
        ]
      : [];
  return {
    row: { record, step: null, plan: null, capacity: null, lease: null, interrupted: false, hidden_calls: [] },
    records,
  };
}

export interface Advanced {
  row: HandoffRow;
  records: AuditRecord[];
  /** The transition's effects other than its audit record, in order. */
  effects: HandoffEffect[];
}

/**
 * Applies one command: `patch` (e.g. the chosen target, the error) first, so the machine
 * sees it; then the new status, a transition entry and the audit record.
 */
export function advance(
  row: HandoffRow,
  command: HandoffCommandInput,
  ctx: StepContext,
  patch: Partial<Pick<Handoff, "target" | "context" | "error" | "deadline_at">> = {},
  extra: HandoffAuditExtra = {},
): Result<Advanced> {
  const before: Handoff = { ...row.record, ...patch };
  const result = transition(
    {
      status: before.status,
      policy: before.policy,
      source: before.source,
      target: before.target,
      timeout_s: before.request.timeout_s,
      target_capacity: row.capacity,
      target_leased: row.lease !== null,
      source_leased: ctx.leased_agent !== null && ctx.leased_agent === before.source,
      interrupted: row.interrupted,
    },
    command,
  );
  if (!result.ok) return result;
  const at = new Date(ctx.now).toISOString();
  const record: Handoff = {
    ...before,
    status: result.next,
    updated_at: at,
    transitions: [
      ...before.transitions,
      command.reason === undefined
        ? { from: before.status, to: result.next, at }
        : { from: before.status, to: result.next, at, reason: command.reason },
    ],
  };
  const records: AuditRecord[] = [];
  const effects: HandoffEffect[] = [];
  for (const effect of result.effects) {
    if (effect.type !== "audit") effects.push(effect);
    else
      records.push(
        handoffTransitioned(
          ctx.scope,
          ctx.actor,
          ctx.now,
          subjectOf(record),
          effect,
          patch.error ? { error_code: patch.error.code, ...extra } : extra,
        ),
      );
  }
  return ok({ row: { ...row, record }, records, effects });
}

/** Two steps committed as one: `next`'s row, both steps' records and effects in order. */
export function joinSteps(first: Advanced, next: Advanced): Advanced {
  return { row: next.row, records: [...first.records, ...next.records], effects: [...first.effects, ...next.effects] };
}

/** `advance` for commands the flow knows are legal: a refusal here is a bug, not a request error. */
export function must(result: Result<Advanced>): Advanced {
  if (!result.ok) throw new Error(`handoff flow: ${result.error.message}`);
  return result.value;
}

/** The session after the switch (`activate_target`): the target current, the chain and context it was handed. */
export function switchedSession(
  session: SessionRecord,
  plan: ValidatedHandoff,
  context: HandoffContext,
): SessionRecord {
  return {
    ...session,
    current_agent: plan.target,
    handoff_stack: plan.chain,
    last_handoff_context: context,
    handoff_count: session.handoff_count + 1,
  };
}

/** The summary the session view shows while a handoff holds the lock. */
export function inFlightOf(record: Handoff): InFlightHandoff {
  const summary: InFlightHandoff = {
    id: record.id,
    status: record.status,
    mode: record.mode,
    policy: record.policy,
    source: record.source,
    target: record.target,
  };
  if (record.deadline_at !== undefined) summary.deadline_at = record.deadline_at;
  return summary;
}

/** A handoff's error as the API returns it: the rule's error, naming the handoff it ended. */
export function handoffError(error: ErrorBody, record: Handoff): { ok: false; error: ErrorBody } {
  const details =
    error.details !== null && typeof error.details === "object" && !Array.isArray(error.details)
      ? error.details
      : error.details === undefined
        ? {}
        : { cause: error.details };
  return err(error.code, error.message, { ...details, handoff_id: record.id, status: record.status });
}

/** An error as a handoff record keeps it. */
export function stored(error: ErrorBody): StoredError {
  return error.details === undefined
    ? { code: error.code, message: error.message }
    : { code: error.code, message: error.message, details: error.details };
}

/** The session's depth limit: `max_handoff_depth` in its metadata (1–50), else DEFAULT_MAX_DEPTH. */
export function maxDepthOf(session: SessionRecord): number {
  const value = session.metadata.max_handoff_depth;
  return typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= 50 ? value : DEFAULT_MAX_DEPTH;
}
