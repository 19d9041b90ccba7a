import type { Env } from "../env";
import { ok, type Result } from "../errors";
import { resolveProvider } from "../providers";
import type { ChatProvider } from "../providers/types";
import { patchFromVars, resolveConfig } from "../routing/config";
import { tenantHead } from "./registry-cache";
import { meteredProvider } from "./usage-meter";

/**
 * The model provider agents' turns use: the tenant's resolved `llm` settings (the same
 * layers as routing: defaults < Worker vars < tenant config), so one configuration picks
 * the provider for the router and the agents; an agent's `model` overrides the model.
 */
export interface AgentModels {
  provider: Result<ChatProvider>;
  default_model: string;
}

export async function agentModels(env: Env, tenant: string): Promise<AgentModels> {
  const { tenantConfig } = await tenantHead(env.DB, tenant);
  const { config } = resolveConfig({ env: patchFromVars(env).patch, tenant: tenantConfig, warnings: [] });
  const resolved = resolveProvider(config.llm.provider, env);
  // Every call is counted in the tenant's usage (model calls and tokens by provider and model).
  const provider = resolved.ok ? ok(meteredProvider(env, tenant, resolved.value)) : resolved;
  // The local stand-in has no models: traces say "local" rather than a model it is not.
  return { provider, default_model: provider.ok && provider.value.name === "local" ? "local" : config.llm.model };
}
