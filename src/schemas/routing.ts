import * as z from "zod";
import { AgentName } from "./agent";

export const RoutingStrategy = z.enum(["rule", "llm", "hybrid"]);
export type RoutingStrategy = z.infer<typeof RoutingStrategy>;

export const FallbackStrategy = z.enum(["none", "prompt_user", "default_agent"]);
export type FallbackStrategy = z.infer<typeof FallbackStrategy>;

export const ProviderName = z.enum(["openai", "workers-ai", "local"]);
export type ProviderName = z.infer<typeof ProviderName>;

/** The resolved routing configuration (docs/configuration.md): every field has a value. */
export const RoutingConfig = z.strictObject({
  enabled: z.boolean(),
  strategy: RoutingStrategy,
  /** The rule tier decides alone when its confidence is at least this (0–100). */
  threshold: z.number().min(0).max(100),
  llm: z.strictObject({
    provider: ProviderName,
    model: z.string().min(1).max(200),
    timeout_ms: z.number().int().min(50).max(60_000),
  }),
  fallback: FallbackStrategy,
  default_agent: AgentName.nullable(),
  /**
   * Keep the inputs of routed sessions in the tenant's routing history, for replays of a draft
   * team (docs/routing.md, Replay; docs/security.md). Customers' words: the tenant can turn it off.
   */
  record_inputs: z.boolean(),
});
export type RoutingConfig = z.infer<typeof RoutingConfig>;

/** A partial config: what a tenant stores and what a request overrides. */
export const RoutingConfigPatch = z.strictObject({
  enabled: z.boolean().optional(),
  strategy: RoutingStrategy.optional(),
  threshold: z.number().min(0).max(100).optional(),
  llm: z
    .strictObject({
      provider: ProviderName.optional(),
      model: z.string().min(1).max(200).optional(),
      timeout_ms: z.number().int().min(50).max(60_000).optional(),
    })
    .optional(),
  fallback: FallbackStrategy.optional(),
  default_agent: AgentName.nullable().optional(),
  record_inputs: z.boolean().optional(),
});
export type RoutingConfigPatch = z.infer<typeof RoutingConfigPatch>;

export const ConfigSource = z.enum(["default", "env", "tenant", "request"]);
export type ConfigSource = z.infer<typeof ConfigSource>;

/** Inputs are limited so one route stays one cheap pass; larger bodies get 413. */
export const MAX_INPUT_BYTES = 32 * 1024;

export const RouteRequest = z.strictObject({
  input: z.string().min(1, "input must not be empty"),
  strategy: RoutingStrategy.optional(),
  config: RoutingConfigPatch.optional(),
});
export type RouteRequest = z.infer<typeof RouteRequest>;

export const RouteMethod = z.enum(["rule", "llm", "fallback", "none"]);
export type RouteMethod = z.infer<typeof RouteMethod>;

export const RouteCandidate = z.object({
  agent: AgentName,
  score: z.number(),
  confidence: z.number(),
  matched_keywords: z.array(z.string()),
  matched_patterns: z.array(z.string()),
});
export type RouteCandidate = z.infer<typeof RouteCandidate>;

export const AgentSummary = z.object({ name: AgentName, title: z.string(), description: z.string() });
export type AgentSummary = z.infer<typeof AgentSummary>;

export const RouteDecision = z.object({
  agent: AgentName.nullable(),
  method: RouteMethod,
  strategy: RoutingStrategy,
  threshold: z.number(),
  confidence: z.number(),
  score: z.number(),
  matched_keywords: z.array(z.string()),
  matched_patterns: z.array(z.string()),
  candidates: z.array(RouteCandidate),
  /** Why the rule tier decided as it did: the terms and examples that weighed most. */
  explanation: z.unknown().optional(),
  fallback: z
    .object({
      strategy: FallbackStrategy,
      reason: z.string(),
      agents: z.array(AgentSummary).optional(),
    })
    .optional(),
  llm: z
    .object({
      provider: ProviderName,
      model: z.string(),
      duration_ms: z.number(),
      tool_call: z.object({ name: z.string(), arguments: z.unknown() }).nullable(),
      error: z.string().optional(),
    })
    .optional(),
  /**
   * The registry version whose router decided. Right after a registry change an isolate
   * answers with the version it holds while it loads the new one (docs/scaling.md).
   */
  registry_version: z.number().int(),
  latency_us: z.number(),
  /**
   * The rule tier's share of `latency_us`, on the same clock; absent when it did not run
   * (strategy `llm`). An isolate that had the router object decide waits for that answer in
   * the registry lookup, not here (docs/routing.md).
   */
  rule_us: z.number().optional(),
});
export type RouteDecision = z.infer<typeof RouteDecision>;
