import type { ErrorBody } from "../errors";

/**
 * The handoff errors, one constructor per rule, so the pure validator and the Durable
 * Objects (which decide AGENT_UNAVAILABLE and HANDOFF_IN_PROGRESS from leases and locks)
 * word them the same way. Each returns an ErrorBody; wrap it as `{ ok: false, error }`.
 */
export const handoffErrors = {
  agentNotFound(agent: string, role: "source" | "target"): ErrorBody {
    return {
      code: "AGENT_NOT_FOUND",
      message: `The ${role} agent '${agent}' does not exist.`,
      details: { agent, role },
    };
  },

  notCurrentAgent(agent: string, current: string | null): ErrorBody {
    return {
      code: "NOT_CURRENT_AGENT",
      message:
        current === null
          ? `'${agent}' does not hold the session: it has no current agent.`
          : `'${agent}' does not hold the session; '${current}' does.`,
      details: { agent, current_agent: current },
    };
  },

  notAllowed(source: string, target: string, allowed: string[]): ErrorBody {
    return {
      code: "HANDOFF_NOT_ALLOWED",
      message:
        allowed.length === 0
          ? `'${source}' may not hand off to anyone.`
          : `'${source}' may not hand off to '${target}'; allowed: ${allowed.join(", ")}.`,
      details: { source, target, allowed_targets: allowed },
    };
  },

  wrongReturnTarget(source: string, target: string, expected: string): ErrorBody {
    return {
      code: "HANDOFF_NOT_ALLOWED",
      message: `'${source}' can only return to '${expected}', the agent that handed over, not '${target}'.`,
      details: { source, target, allowed_targets: [expected] },
    };
  },

  conditionNotMet(condition: string, origin: "request" | "whitelist", values: Record<string, unknown>): ErrorBody {
    return {
      code: "CONDITION_NOT_MET",
      message: `The ${origin === "request" ? "request's" : "handoff's"} condition is false: ${condition}`,
      details: { condition, origin, values },
    };
  },

  conditionRequired(): ErrorBody {
    return {
      code: "VALIDATION_FAILED",
      message: "A conditional handoff needs a condition, in the request or in the source's handoff entry.",
      details: { issues: [{ path: "condition", message: "required when policy is 'conditional'" }] },
    };
  },

  maxDepthExceeded(chain: string[], maxDepth: number): ErrorBody {
    return {
      code: "MAX_DEPTH_EXCEEDED",
      message: `The handoff chain would be ${chain.length - 1} deep; at most ${maxDepth} is allowed.`,
      details: { chain, depth: chain.length - 1, max_depth: maxDepth },
    };
  },

  circular(chain: string[], target: string): ErrorBody {
    return {
      code: "CIRCULAR_HANDOFF",
      message: `'${target}' is already in the handoff chain (${chain.join(" → ")}); use a return to go back.`,
      details: { chain, target },
    };
  },

  capabilityMismatch(required: string[], candidates: unknown[]): ErrorBody {
    return {
      code: "CAPABILITY_MISMATCH",
      message: `No allowed target has all of: ${required.join(", ")}.`,
      details: { required_capabilities: required, candidates },
    };
  },

  nothingToReturn(stack: string[]): ErrorBody {
    return {
      code: "NOTHING_TO_RETURN",
      message: "There is no agent to return to: nobody handed this session over.",
      details: { handoff_stack: stack },
    };
  },

  /** The target cannot take the session: disabled, paused, or at max_concurrent_sessions (the AgentDO decides). */
  agentUnavailable(
    agent: string,
    reason: "disabled" | "paused" | "at_capacity" | string,
    extra?: Record<string, unknown>,
  ): ErrorBody {
    return {
      code: "AGENT_UNAVAILABLE",
      message: `'${agent}' cannot take the session now (${reason.replace(/_/g, " ")}).`,
      details: { agent, reason, ...extra },
    };
  },

  /** The session already has a handoff in flight (the SessionDO's lock decides). */
  inProgress(sessionId: string, handoffId: string, status: string): ErrorBody {
    return {
      code: "HANDOFF_IN_PROGRESS",
      message: `Session '${sessionId}' already has handoff '${handoffId}' in flight (${status}).`,
      details: { session_id: sessionId, handoff_id: handoffId, status },
    };
  },
} as const;
