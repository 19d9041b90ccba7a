import { scoreAgent } from "../collaboration/capability-match";
import type { AgentDefinition, HandoffSpec, HandoffTrigger } from "../schemas/agent";
import type { TriggerPoint } from "../schemas/trigger";
import { checkCondition } from "./condition";

/**
 * Which of the current agent's triggered handoffs fires at an evaluation point (docs/triggers.md),
 * pure. The session's object calls it after a state change, on an event, by alarm, after a
 * failed turn, on a task that needs capabilities, and when a trigger is fired by name; it
 * starts the handoff the answer names. Entries are tried in whitelist order; the first that
 * fires wins (for capabilities: the best match).
 */

export type { TriggerPoint };

/** The point a run's end raises: an error point for a failed run (with its code), else a condition point. */
export const pointAfterRun = (failedWith: string | null): TriggerPoint =>
  failedWith === null ? { type: "condition" } : { type: "error", code: failedWith };

export interface FiredTrigger {
  target: string;
  trigger: HandoffTrigger;
  /** The handoff's reason: which trigger, and why it fired. */
  reason: string;
}

export interface TriggerInput {
  agent: AgentDefinition;
  directory: ReadonlyMap<string, AgentDefinition>;
  state: Record<string, unknown>;
}

const holds = (expression: string | undefined, state: Record<string, unknown>): boolean => {
  if (expression === undefined) return true;
  const result = checkCondition(expression, state);
  return result.ok && result.value;
};

/** The entries of the agent that can fire now: a trigger, an enabled target. */
function triggered(input: TriggerInput): { entry: HandoffSpec; trigger: HandoffTrigger; target: AgentDefinition }[] {
  return input.agent.handoffs.flatMap((entry) => {
    const target = input.directory.get(entry.to);
    return entry.trigger && entry.when !== "manual" && target?.enabled
      ? [{ entry, trigger: entry.trigger, target }]
      : [];
  });
}

/**
 * Whether any trigger of the agent answers points of `point`'s type, whatever the state:
 * false means no evaluation of the point could fire, so there is nothing to evaluate.
 */
export function mayFire(point: TriggerPoint, input: Omit<TriggerInput, "state">): boolean {
  return triggered({ ...input, state: {} }).some((c) => c.trigger.type === point.type);
}

export function firedTrigger(point: TriggerPoint, input: TriggerInput): FiredTrigger | null {
  const candidates = triggered(input).filter((c) => c.trigger.type === point.type);
  const fire = (c: (typeof candidates)[number], why: string): FiredTrigger => ({
    target: c.target.name,
    trigger: c.trigger,
    reason: `trigger (${c.trigger.type}): ${why}`,
  });
  switch (point.type) {
    case "condition": {
      const hit = candidates.find((c) => holds(c.trigger.expression, input.state));
      return hit ? fire(hit, hit.trigger.expression!) : null;
    }
    case "event": {
      const scope = { ...input.state, event: point.data };
      const hit = candidates.find((c) => c.trigger.event === point.name && holds(c.trigger.expression, scope));
      return hit ? fire(hit, `event '${point.name}'`) : null;
    }
    case "explicit": {
      const hit = candidates.find((c) => c.target.name === point.target);
      return hit ? fire(hit, `fired for '${point.target}'`) : null;
    }
    case "timeout": {
      const hit = candidates.find((c) => c.trigger.timeout_s! * 1000 <= point.idle_ms);
      return hit ? fire(hit, `no progress for ${hit.trigger.timeout_s} s`) : null;
    }
    case "error": {
      const hit = candidates.find((c) => c.trigger.error_types!.some((t) => t === "*" || t === point.code));
      return hit ? fire(hit, `a turn failed with ${point.code}`) : null;
    }
    case "capability": {
      const required = point.required;
      if (required.length === 0 || scoreAgent(input.agent, required).missing.length === 0) return null;
      const wanted = new Set(required.map((r) => r.toLowerCase()));
      const ranked = candidates
        .filter((c) => !c.trigger.capabilities || c.trigger.capabilities.some((cap) => wanted.has(cap.toLowerCase())))
        .map((c) => ({ c, match: scoreAgent(c.target, required) }))
        .filter((m) => m.match.matched.length > 0)
        .sort((a, b) => b.match.score - a.match.score || (a.c.target.name < b.c.target.name ? -1 : 1));
      const best = ranked[0];
      return best
        ? fire(
            best.c,
            `needs ${required.join(", ")}; '${input.agent.name}' lacks ${scoreAgent(input.agent, required).missing.join(", ")} (match ${best.match.score})`,
          )
        : null;
    }
  }
}

/** The shortest timeout trigger of the agent, in ms (null: it has none): when the alarm should look again. */
export function nextTimeoutMs(input: Pick<TriggerInput, "agent" | "directory">): number | null {
  const timeouts = triggered({ ...input, state: {} })
    .filter((c) => c.trigger.type === "timeout")
    .map((c) => c.trigger.timeout_s! * 1000);
  return timeouts.length > 0 ? Math.min(...timeouts) : null;
}
