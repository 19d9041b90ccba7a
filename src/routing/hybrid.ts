import type { RouteDecision, RoutingConfig, RoutingStrategy } from "../schemas/routing";
import { applyFallback } from "./fallback";
import type { RoutableAgent } from "./llm/transfer-tools";
import type { RuleDecision, RuleRouter } from "./types";

/** What the LLM tier reports back: a chosen agent, or why it could not choose. */
export type LlmOutcome =
  | {
      ok: true;
      agent: string;
      reason: string;
      context?: string;
      tool_call: { name: string; arguments: unknown };
      duration_ms: number;
    }
  | {
      ok: false;
      reason: string;
      message: string;
      tool_call?: { name: string; arguments: unknown };
      duration_ms: number;
    };

export interface RouteInputs {
  input: string;
  config: RoutingConfig;
  rules: RuleRouter;
  /** The tenant's registry (enabled and disabled); the tiers ignore disabled agents. */
  agents: readonly RoutableAgent[];
  /** Calls the LLM tier; injected so the decision logic stays pure and testable. */
  llm: (input: string) => Promise<LlmOutcome>;
  /** The clock the rule tier is timed by, in ms (default `performance.now`). */
  now?: () => number;
}

export type RouteResult = Omit<RouteDecision, "latency_us" | "registry_version">;

/** What decisions report as the model of the offline `local` provider. */
export const LOCAL_MODEL = "local-lexical (not an LLM)";

/**
 * The routing decision (docs/routing.md, The tiers). `rule` trusts the rule tier at confidence ≥ threshold,
 * `llm` always asks the model, `hybrid` asks the model only when the rules are unsure.
 * Whatever no tier decides goes to the configured fallback, with the reason. The rule tier's
 * time is `rule_us`; the LLM tier's is `llm.duration_ms`.
 */
export async function decideRoute({ input, config, rules, agents, llm, now }: RouteInputs): Promise<RouteResult> {
  const strategy: RoutingStrategy = config.strategy;
  const clock = now ?? (() => performance.now());
  const started = clock();
  const rule = strategy === "llm" ? null : await rules.decideInTurns(input);
  const base = baseDecision(config, rule);
  if (rule) base.rule_us = Math.round((clock() - started) * 1000);

  if (rule?.agent && rule.confidence >= config.threshold) {
    return { ...base, agent: rule.agent, method: "rule" };
  }
  if (strategy === "rule") {
    return { ...base, ...applyFallback(config, agents, ruleUnsureReason(rule, config.threshold)) };
  }

  const outcome = await llm(input);
  const llmDetails: NonNullable<RouteDecision["llm"]> = {
    provider: config.llm.provider,
    // The offline provider ignores the model setting; say so rather than name a model never called.
    model: config.llm.provider === "local" ? LOCAL_MODEL : config.llm.model,
    duration_ms: outcome.duration_ms,
    tool_call: outcome.tool_call ?? null,
    ...(outcome.ok ? {} : { error: `${outcome.reason}: ${outcome.message}` }),
  };
  if (outcome.ok) return { ...base, agent: outcome.agent, method: "llm", llm: llmDetails };
  const reason = `${strategy === "hybrid" ? `${ruleUnsureReason(rule, config.threshold)}; ` : ""}LLM router failed (${outcome.reason})`;
  return { ...base, ...applyFallback(config, agents, reason), llm: llmDetails };
}

function baseDecision(config: RoutingConfig, rule: RuleDecision | null): RouteResult {
  return {
    agent: null,
    method: "none",
    strategy: config.strategy,
    threshold: config.threshold,
    confidence: rule?.confidence ?? 0,
    score: rule?.score ?? 0,
    matched_keywords: rule?.matched_keywords ?? [],
    matched_patterns: rule?.matched_patterns ?? [],
    candidates: (rule?.candidates ?? []).map((c) => ({
      agent: c.agent,
      score: c.score,
      confidence: c.confidence,
      matched_keywords: c.matched_keywords,
      matched_patterns: c.matched_patterns,
    })),
    ...(rule?.explanation === undefined ? {} : { explanation: rule.explanation }),
  };
}

function ruleUnsureReason(rule: RuleDecision | null, threshold: number): string {
  if (!rule?.agent) return "no rule matched";
  return `rule confidence ${rule.confidence} is below the threshold ${threshold}`;
}
