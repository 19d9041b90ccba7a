import type { Env } from "../env";
import { RelayError } from "../errors";
import { resolveProvider } from "../providers";
import { configProblems, patchFromVars, type ResolvedConfig, resolveConfig } from "../routing/config";
import { agentSummaries } from "../routing/fallback";
import { decideRoute, type LlmOutcome } from "../routing/hybrid";
import { routeWithLlm } from "../routing/llm/route-with-llm";
import type { RouteNeeds } from "../rpc/router";
import type { RouteDecision, RoutingConfig, RoutingConfigPatch, RoutingStrategy } from "../schemas/routing";
import { type CompiledRegistry, type RoutingRegistry, routerAt, routerFor, tenantHead } from "./registry-cache";
import { meteredProvider } from "./usage-meter";

/**
 * Routing as the Worker runs it: the registry head and the tenant's config (cached per
 * isolate for at most HEAD_TTL_MS), the router the tenant's router object built (the version
 * this isolate holds answers while a newer one loads), then the pure decision.
 */

export interface RoutingContext {
  registry: CompiledRegistry;
  resolved: ResolvedConfig;
}

/** The tenant's router as this isolate holds it (loaded first when it holds none), and its config. */
export async function routingContext(
  env: Env,
  tenant: string,
  override?: RoutingConfigPatch,
  background?: (work: Promise<unknown>) => void,
): Promise<RoutingContext> {
  const { head, resolved } = await configFor(env, tenant, override);
  return { registry: await routerAt(env, tenant, head, background), resolved };
}

async function configFor(env: Env, tenant: string, override?: RoutingConfigPatch) {
  const { head, tenantConfig } = await tenantHead(env.DB, tenant);
  const { patch, warnings } = patchFromVars(env);
  const resolved = resolveConfig({ env: patch, tenant: tenantConfig, request: override, warnings });
  const problems = configProblems(resolved.config);
  if (problems.length > 0) {
    throw new RelayError("INVALID_CONFIG", `Routing configuration is inconsistent: ${problems.join("; ")}.`, {
      problems,
      sources: resolved.sources,
    });
  }
  return { head, resolved };
}

export interface RouteOptions {
  strategy?: RoutingStrategy;
  config?: RoutingConfigPatch;
  /** Keeps a router load started by this route alive past its response (`ctx.waitUntil`). */
  background?: (work: Promise<unknown>) => void;
}

export interface TimedDecision {
  decision: RouteDecision;
  /** The registry the decision was made on. */
  registry: RoutingRegistry;
  /** Server-Timing entries, in ms. */
  timings: { name: string; dur: number }[];
}

/** Routes one input for a tenant. Changes nothing; throws ROUTING_DISABLED when routing is off. */
export async function routeInput(
  env: Env,
  tenant: string,
  input: string,
  options: RouteOptions = {},
): Promise<TimedDecision> {
  const started = performance.now();
  const override = options.strategy ? { ...options.config, strategy: options.strategy } : options.config;
  const { head, resolved } = await configFor(env, tenant, override);
  const { config } = resolved;
  // An isolate that holds no router asks the router object to decide this input meanwhile.
  const needs: RouteNeeds = {
    decide: config.enabled && config.strategy !== "llm",
    threshold: config.threshold,
    list: listNeeded(config),
  };
  const registry = await routerFor(env, tenant, head, input, needs, options.background);
  const loaded = performance.now();
  if (!config.enabled) {
    throw new RelayError("ROUTING_DISABLED", "Routing is disabled for this tenant; choose an agent yourself.", {
      agents: agentSummaries(registry.agents),
    });
  }
  let llmMs = 0;
  const llm = async (text: string): Promise<LlmOutcome> => {
    const provider = resolveProvider(config.llm.provider, env);
    // A provider that is not set up (no key, no binding) is one more reason to fall back.
    if (!provider.ok)
      return { ok: false, reason: "provider_unavailable", message: provider.error.message, duration_ms: 0 };
    const outcome = await routeWithLlm(meteredProvider(env, tenant, provider.value), registry.agents, text, {
      model: config.llm.model,
      timeoutMs: config.llm.timeout_ms,
    });
    llmMs = outcome.duration_ms;
    return outcome;
  };
  const result = await decideRoute({ input, config, rules: registry.rules, agents: registry.agents, llm });
  const total = performance.now() - started;
  return {
    decision: { ...result, registry_version: registry.version, latency_us: Math.round(total * 1000) },
    registry,
    timings: [
      { name: "registry", dur: loaded - started },
      ...(result.llm ? [{ name: "llm", dur: llmMs }] : []),
      { name: "total", dur: total },
    ],
  };
}

/**
 * What a route reads of the agents when the rule tier is not sure (the router object's answer
 * need carry no more): with the rule strategy, only the fallback reads them — `prompt_user` the
 * enabled agents' summaries, `none` nothing; a default agent or the LLM tier read every agent.
 */
function listNeeded(config: RoutingConfig): RouteNeeds["list"] {
  if (!config.enabled || config.strategy !== "rule") return "every";
  if (config.fallback === "none") return "none";
  return config.fallback === "prompt_user" ? "summaries" : "every";
}
