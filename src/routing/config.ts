import * as z from "zod";
import { AgentName } from "../schemas/agent";
import {
  type ConfigSource,
  FallbackStrategy,
  ProviderName,
  RoutingConfig,
  RoutingConfigPatch,
  RoutingStrategy,
} from "../schemas/routing";

/**
 * Routing configuration in layers, lowest first: built-in defaults < Worker vars <
 * the tenant's stored config < the request's override (docs/configuration.md). Resolution is pure:
 * it reports, for every value, the layer it came from.
 */

export const DEFAULT_ROUTING: RoutingConfig = {
  enabled: true,
  strategy: "hybrid",
  threshold: 80,
  llm: { provider: "local", model: "gpt-4.1-mini", timeout_ms: 3000 },
  fallback: "prompt_user",
  default_agent: null,
  record_inputs: true,
};

/** The dotted paths of RoutingConfig, each a value with a source. */
export const CONFIG_PATHS = [
  "enabled",
  "strategy",
  "threshold",
  "llm.provider",
  "llm.model",
  "llm.timeout_ms",
  "fallback",
  "default_agent",
  "record_inputs",
] as const;
export type ConfigPath = (typeof CONFIG_PATHS)[number];

export interface ResolvedConfig {
  config: RoutingConfig;
  sources: Record<ConfigPath, ConfigSource>;
  /** Worker vars that were set but could not be used (the default stood instead). */
  warnings: string[];
}

/** The Worker vars routing reads; see docs/configuration.md, Routing configuration. */
export interface RoutingVars {
  ROUTING_ENABLED?: string;
  ROUTING_STRATEGY?: string;
  ROUTING_THRESHOLD?: string;
  ROUTING_LLM_PROVIDER?: string;
  ROUTING_LLM_MODEL?: string;
  ROUTING_LLM_TIMEOUT_MS?: string;
  ROUTING_FALLBACK?: string;
  ROUTING_DEFAULT_AGENT?: string;
  ROUTING_RECORD_INPUTS?: string;
  OPENAI_API_KEY?: string;
}

const Bool = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");
const Num = (schema: z.ZodNumber) => z.string().trim().min(1).pipe(z.coerce.number()).pipe(schema);

const VAR_PARSERS: { name: keyof RoutingVars; path: ConfigPath; schema: z.ZodType }[] = [
  { name: "ROUTING_ENABLED", path: "enabled", schema: Bool },
  { name: "ROUTING_STRATEGY", path: "strategy", schema: RoutingStrategy },
  { name: "ROUTING_THRESHOLD", path: "threshold", schema: Num(z.number().min(0).max(100)) },
  { name: "ROUTING_LLM_PROVIDER", path: "llm.provider", schema: ProviderName },
  { name: "ROUTING_LLM_MODEL", path: "llm.model", schema: z.string().min(1).max(200) },
  { name: "ROUTING_LLM_TIMEOUT_MS", path: "llm.timeout_ms", schema: Num(z.number().int().min(50).max(60_000)) },
  { name: "ROUTING_FALLBACK", path: "fallback", schema: FallbackStrategy },
  { name: "ROUTING_DEFAULT_AGENT", path: "default_agent", schema: AgentName },
  { name: "ROUTING_RECORD_INPUTS", path: "record_inputs", schema: Bool },
];

/** Worker vars as a patch. A var that does not parse is reported, not fatal: the API stays up. */
export function patchFromVars(vars: RoutingVars): { patch: RoutingConfigPatch; warnings: string[] } {
  const flat: Partial<Record<ConfigPath, unknown>> = {};
  const warnings: string[] = [];
  for (const { name, path, schema } of VAR_PARSERS) {
    const raw = vars[name];
    if (raw === undefined || raw === "") continue;
    const parsed = schema.safeParse(raw);
    if (parsed.success) flat[path] = parsed.data;
    else warnings.push(`${name}=${JSON.stringify(raw)} ignored: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  }
  // A configured OpenAI key makes the OpenAI provider the default unless a provider is named.
  if (flat["llm.provider"] === undefined && vars.OPENAI_API_KEY) flat["llm.provider"] = "openai";
  return { patch: unflatten(flat), warnings };
}

function get(patch: RoutingConfigPatch, path: ConfigPath): unknown {
  if (path.startsWith("llm.")) return patch.llm?.[path.slice(4) as keyof NonNullable<RoutingConfigPatch["llm"]>];
  return patch[path as Exclude<ConfigPath, `llm.${string}`>];
}

function unflatten(flat: Partial<Record<ConfigPath, unknown>>): RoutingConfigPatch {
  const patch: Record<string, unknown> = {};
  const llm: Record<string, unknown> = {};
  for (const [path, value] of Object.entries(flat)) {
    if (path.startsWith("llm.")) llm[path.slice(4)] = value;
    else patch[path] = value;
  }
  if (Object.keys(llm).length > 0) patch.llm = llm;
  return RoutingConfigPatch.parse(patch);
}

/** Applies the layers in order; later layers win value by value. */
export function resolveConfig(layers: {
  env?: RoutingConfigPatch;
  tenant?: RoutingConfigPatch | null;
  request?: RoutingConfigPatch;
  warnings?: string[];
}): ResolvedConfig {
  const flat: Record<string, unknown> = {};
  const sources = {} as Record<ConfigPath, ConfigSource>;
  const ordered: [ConfigSource, RoutingConfigPatch | null | undefined][] = [
    ["default", DEFAULT_ROUTING],
    ["env", layers.env],
    ["tenant", layers.tenant],
    ["request", layers.request],
  ];
  for (const [source, patch] of ordered) {
    if (!patch) continue;
    for (const path of CONFIG_PATHS) {
      const value = get(patch, path);
      if (value !== undefined) {
        flat[path] = value;
        sources[path] = source;
      }
    }
  }
  const config = RoutingConfig.parse({ ...unflatten(flat as Partial<Record<ConfigPath, unknown>>) });
  return { config, sources, warnings: layers.warnings ?? [] };
}

/** Rules across fields that a single field's schema cannot see. Returns problems, empty when sound. */
export function configProblems(config: RoutingConfig): string[] {
  const problems: string[] = [];
  if (config.fallback === "default_agent" && !config.default_agent) {
    problems.push("fallback 'default_agent' needs default_agent to name an agent");
  }
  return problems;
}
