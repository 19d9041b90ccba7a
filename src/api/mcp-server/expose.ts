import { RelayError } from "../../errors";
import type { AgentSummary, RouteDecision } from "../../schemas/routing";

/**
 * The tenant's `mcp.expose` (docs/mcp-server.md, Exposing some agents), pure: which agents an
 * MCP client is offered, and a routing decision as an MCP client may see it. It shapes what
 * `/mcp` offers; it is not access control (the same key reaches `/v1`).
 */

/** The agents an MCP client is offered: every agent (null), or the names listed. */
export type Exposure = ReadonlySet<string> | null;

/** The exposure `mcp.expose` says (absent or null: every agent). */
export const exposureOf = (expose: readonly string[] | null | undefined): Exposure =>
  expose == null ? null : new Set(expose);

export const isExposed = (exposure: Exposure, agent: string): boolean => exposure === null || exposure.has(agent);

/** A tool's refusal to start or continue a conversation with an agent the tenant does not expose. */
export function notExposed(agent: string): RelayError {
  return new RelayError("AGENT_UNAVAILABLE", `Agent '${agent}' is not exposed over MCP (the tenant's mcp.expose).`, {
    agent,
    reason: "not_exposed",
  });
}

/** Throws `notExposed` unless the agent is exposed. */
export function assertExposed(exposure: Exposure, agent: string): void {
  if (!isExposed(exposure, agent)) throw notExposed(agent);
}

/**
 * A routing decision as an MCP client sees it. The router decides over the whole team (one
 * compiled router per tenant); then candidates and fallback lists keep only exposed agents, and
 * a pick the tenant does not expose is never the answer: the best exposed candidate the rule
 * tier would trust alone (confidence at or over the threshold) takes its place, else the
 * decision names no agent and offers the exposed ones (`prompt_user`). Nothing about the
 * withheld pick is shown — its name, matched terms, explanation or the LLM's tool call.
 */
export function exposedDecision(
  decision: RouteDecision,
  exposure: Exposure,
  exposedAgents: readonly AgentSummary[],
): RouteDecision {
  if (exposure === null) return decision;
  const candidates = decision.candidates.filter((c) => exposure.has(c.agent));
  const fallback = decision.fallback && {
    ...decision.fallback,
    ...(decision.fallback.agents ? { agents: decision.fallback.agents.filter((a) => exposure.has(a.name)) } : {}),
  };
  const kept = { ...decision, candidates, ...(fallback ? { fallback } : {}) };
  if (decision.agent === null || exposure.has(decision.agent)) return kept;
  const { explanation: _withheld, ...rest } = kept;
  const llm = decision.llm && { ...decision.llm, tool_call: null };
  const trusted = candidates.find((c) => c.confidence >= decision.threshold);
  if (trusted) {
    const { fallback: _none, ...picked } = rest;
    return {
      ...picked,
      agent: trusted.agent,
      method: "rule",
      confidence: trusted.confidence,
      score: trusted.score,
      matched_keywords: trusted.matched_keywords,
      matched_patterns: trusted.matched_patterns,
      ...(llm ? { llm } : {}),
    };
  }
  return {
    ...rest,
    agent: null,
    method: "fallback",
    confidence: 0,
    score: 0,
    matched_keywords: [],
    matched_patterns: [],
    fallback: {
      strategy: "prompt_user",
      reason: "the router's pick is not exposed over MCP; choose one of these agents",
      agents: [...exposedAgents],
    },
    ...(llm ? { llm } : {}),
  };
}
