import { type CapabilityMatch, scoreAgent } from "../collaboration/capability-match";
import { type ErrorBody, ok, type Result } from "../errors";
import type { AgentDefinition, HandoffSpec } from "../schemas/agent";
import type { HandoffMode, HandoffRequest } from "../schemas/handoff";
import { checkCondition, compileConditionCached, conditionPaths, readPath } from "../triggers/condition";
import { depth, nextStack, returnTarget } from "./chain";
import { handoffErrors } from "./errors";
import type { ValidatedHandoff } from "./plan";

export { ValidatedHandoff } from "./plan";

/**
 * Handoff validation (docs/handoffs.md, Validation), pure: the Durable Object loads the agents and the
 * session, calls `validateHandoff`, and persists the outcome. Rules run in this fixed
 * order and the first broken one is reported:
 *
 *  1. AGENT_NOT_FOUND      the source does not exist
 *  2. NOT_CURRENT_AGENT    the source does not hold the session
 *  3. NOTHING_TO_RETURN    a return with nobody to return to (stack shorter than 2)
 *  4. AGENT_NOT_FOUND      the named target (or the return target) does not exist
 *  5. HANDOFF_NOT_ALLOWED  transfer: target not in the source's `handoffs`; return: a
 *                          `target_agent` other than the agent that handed over;
 *                          by capability: the source may hand off to nobody
 *  6. CONDITION_NOT_MET    the request's condition, then the whitelist entry's, is false on
 *                          session state (INVALID_CONDITION if one does not parse;
 *                          VALIDATION_FAILED for a conditional policy with no condition)
 *  7. MAX_DEPTH_EXCEEDED   a transfer would make the chain deeper than maxDepth
 *  8. CIRCULAR_HANDOFF     a transfer to an agent already on the stack
 *  9. CAPABILITY_MISMATCH  by capability: no whitelisted agent left with all requirements
 * 10. AGENT_UNAVAILABLE    the target is disabled
 *
 * HANDOFF_IN_PROGRESS and AGENT_UNAVAILABLE for a paused or full agent (the capacity
 * lease) are decided by the Durable Objects; `handoffErrors` words them.
 *
 * Choices: a return is not gated by the whitelist (going back is always allowed), but
 * the source's entry for the return target, if any, still supplies its filters. By
 * capability, whitelist entries whose condition is false, agents on the stack and disabled
 * agents are left out before matching, and only agents with every
 * requirement qualify (best score, then name). A conditional policy needs a condition in
 * the request or, for a named transfer, in the whitelist entry.
 */

export const DEFAULT_MAX_DEPTH = 5;

/** What the session holds, as validation reads it. */
export interface SessionSnapshot {
  current_agent: string | null;
  /** Root first, current agent last. */
  handoff_stack: readonly string[];
  state: Record<string, unknown>;
}

export interface HandoffValidationInput {
  request: HandoffRequest;
  source: AgentDefinition | null;
  /** The named target (`target_agent`, or the agent a return goes back to); null when not found. */
  target?: AgentDefinition | null;
  /** By capability: the definitions of the source's whitelisted targets that exist. */
  candidates?: readonly AgentDefinition[];
  session: SessionSnapshot;
  maxDepth?: number;
}

/** Why a candidate was left out of a by-capability choice. */
export interface CandidateReport {
  agent: string;
  excluded?: "not_found" | "disabled" | "condition_false" | "invalid_condition" | "on_stack";
  score?: number;
  matched?: string[];
  missing?: string[];
}

const fail = (error: ErrorBody): { ok: false; error: ErrorBody } => ({ ok: false, error });

/** Runs the validation rules in order; the first failure wins. */
export function validateHandoff(input: HandoffValidationInput): Result<ValidatedHandoff> {
  const { request, source, session } = input;
  const stack = session.handoff_stack;
  const maxDepth = input.maxDepth ?? DEFAULT_MAX_DEPTH;

  if (!source) return fail(handoffErrors.agentNotFound(request.source_agent, "source"));
  if (session.current_agent !== source.name)
    return fail(handoffErrors.notCurrentAgent(source.name, session.current_agent));

  if (request.mode === "return") return validateReturn(input, source);

  const named = request.target_agent;
  if (named !== undefined && !input.target) return fail(handoffErrors.agentNotFound(named, "target"));
  const allowed = source.handoffs.map((h) => h.to);
  const entry = named === undefined ? null : (source.handoffs.find((h) => h.to === named) ?? null);
  if (named !== undefined && !entry) return fail(handoffErrors.notAllowed(source.name, named, allowed));
  if (named === undefined && allowed.length === 0)
    return fail(handoffErrors.notAllowed(source.name, "(by capability)", allowed));

  const conditions = checkConditions(request, entry, session.state);
  if (conditions) return fail(conditions);

  if (depth(stack) + 1 > maxDepth)
    return fail(handoffErrors.maxDepthExceeded([...stack, named ?? "(by capability)"], maxDepth));

  if (named !== undefined) {
    const next = nextStack(stack, "transfer", named);
    if (!next.ok) return next;
    const unavailable = availabilityError(input.target!);
    if (unavailable) return fail(unavailable);
    return ok(accepted("transfer", source.name, named, entry, next.value, null));
  }

  const chosen = chooseByCapability(input, source);
  if (!chosen.ok) return chosen;
  const { match, entry: chosenEntry } = chosen.value;
  return ok(accepted("transfer", source.name, match.agent, chosenEntry, [...stack, match.agent], match));
}

function validateReturn(input: HandoffValidationInput, source: AgentDefinition): Result<ValidatedHandoff> {
  const { request, session } = input;
  const back = returnTarget(session.handoff_stack);
  if (back === null) return fail(handoffErrors.nothingToReturn([...session.handoff_stack]));
  if (!input.target) return fail(handoffErrors.agentNotFound(back, "target"));
  const next = nextStack(session.handoff_stack, "return", request.target_agent);
  if (!next.ok) return next;
  const entry = source.handoffs.find((h) => h.to === back) ?? null;
  // A return is not gated by the whitelist, so only the request's own condition counts.
  const conditions = checkConditions(request, null, session.state);
  if (conditions) return fail(conditions);
  const unavailable = availabilityError(input.target);
  if (unavailable) return fail(unavailable);
  return ok(accepted("return", source.name, back, entry, next.value, null));
}

/** Rule 6: the request's condition, then the whitelist entry's; a conditional policy needs one. */
function checkConditions(
  request: HandoffRequest,
  entry: HandoffSpec | null,
  state: Record<string, unknown>,
): ErrorBody | null {
  const sources: { text: string; origin: "request" | "whitelist" }[] = [];
  if (request.condition !== undefined) sources.push({ text: request.condition, origin: "request" });
  if (entry?.condition !== undefined) sources.push({ text: entry.condition, origin: "whitelist" });
  if (request.policy === "conditional" && sources.length === 0) return handoffErrors.conditionRequired();
  for (const { text, origin } of sources) {
    const result = checkCondition(text, state);
    if (!result.ok) return result.error;
    if (!result.value) return handoffErrors.conditionNotMet(text, origin, valuesRead(text, state));
  }
  return null;
}

/** The state values a condition reads, for CONDITION_NOT_MET details (missing ones as null). */
function valuesRead(text: string, state: Record<string, unknown>): Record<string, unknown> {
  const compiled = compileConditionCached(text);
  if (!compiled.ok) return {};
  const values: Record<string, unknown> = {};
  for (const path of conditionPaths(compiled.value)) values[path] = readPath(state, path.split(".")) ?? null;
  return values;
}

function availabilityError(agent: AgentDefinition): ErrorBody | null {
  return agent.enabled ? null : handoffErrors.agentUnavailable(agent.name, "disabled");
}

/** Rule 9: filter the whitelist, score the rest, keep agents with every requirement, take the best. */
function chooseByCapability(
  input: HandoffValidationInput,
  source: AgentDefinition,
): Result<{ match: CapabilityMatch; entry: HandoffSpec }> {
  const required = input.request.required_capabilities ?? [];
  const byName = new Map((input.candidates ?? []).map((a) => [a.name, a]));
  const reports: CandidateReport[] = [];
  const qualified: { match: CapabilityMatch; entry: HandoffSpec }[] = [];
  for (const entry of source.handoffs) {
    const agent = byName.get(entry.to);
    const excluded = exclusionOf(entry, agent, input);
    if (excluded) {
      reports.push({ agent: entry.to, excluded });
      continue;
    }
    const match = scoreAgent(agent!, required);
    reports.push({ agent: entry.to, score: match.score, matched: match.matched, missing: match.missing });
    if (match.missing.length === 0) qualified.push({ match, entry });
  }
  qualified.sort((a, b) => b.match.score - a.match.score || (a.match.agent < b.match.agent ? -1 : 1));
  const best = qualified[0];
  return best ? ok(best) : fail(handoffErrors.capabilityMismatch(required, reports));
}

function exclusionOf(
  entry: HandoffSpec,
  agent: AgentDefinition | undefined,
  input: HandoffValidationInput,
): CandidateReport["excluded"] | null {
  if (!agent) return "not_found";
  if (input.session.handoff_stack.includes(agent.name)) return "on_stack";
  if (!agent.enabled) return "disabled";
  if (entry.condition !== undefined) {
    const result = checkCondition(entry.condition, input.session.state);
    if (!result.ok) return "invalid_condition";
    if (!result.value) return "condition_false";
  }
  return null;
}

function accepted(
  mode: HandoffMode,
  source: string,
  target: string,
  entry: HandoffSpec | null,
  chain: string[],
  match: CapabilityMatch | null,
): ValidatedHandoff {
  return {
    mode,
    source,
    target,
    entry,
    include_context: entry?.include_context ?? true,
    filter: entry?.filter ?? {},
    chain,
    depth: depth(chain),
    match,
  };
}
