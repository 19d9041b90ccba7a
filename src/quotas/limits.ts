import * as z from "zod";
import {
  LIMIT_NAMES,
  type LimitName,
  type LimitSource,
  type Limits,
  MAX_LIMIT,
  type QuotaOverrides,
  type QuotaWindow,
} from "../schemas/quotas";

/**
 * A tenant's limits: the deployment's defaults (Worker vars, docs/configuration.md, Quotas)
 * under the operator's overrides for the tenant. Pure: the vars come in as a record.
 */

/** The Worker vars the defaults are read from; see docs/configuration.md, Quotas. */
export interface QuotaVars {
  QUOTA_REQUESTS_PER_MINUTE?: string;
  QUOTA_SESSIONS_PER_DAY?: string;
  QUOTA_RUNS_PER_MINUTE?: string;
  QUOTA_MODEL_TOKENS_PER_DAY?: string;
  QUOTA_AGENTS?: string;
  QUOTA_TOOLS?: string;
}

/** Each limit's Worker var. */
export const QUOTA_VAR: Record<LimitName, keyof QuotaVars> = {
  requests_per_minute: "QUOTA_REQUESTS_PER_MINUTE",
  sessions_per_day: "QUOTA_SESSIONS_PER_DAY",
  runs_per_minute: "QUOTA_RUNS_PER_MINUTE",
  model_tokens_per_day: "QUOTA_MODEL_TOKENS_PER_DAY",
  agents: "QUOTA_AGENTS",
  tools: "QUOTA_TOOLS",
};

/** The defaults when a var is unset (wrangler.toml sets the same). */
export const BUILT_IN_LIMITS: Limits = {
  requests_per_minute: 1_200,
  sessions_per_day: 20_000,
  runs_per_minute: 300,
  model_tokens_per_day: 20_000_000,
  agents: 20_000,
  tools: 2_000,
};

/** The window each limit counts over; null for a count of things held. */
export const WINDOW_OF: Record<LimitName, QuotaWindow | null> = {
  requests_per_minute: "minute",
  sessions_per_day: "day",
  runs_per_minute: "minute",
  model_tokens_per_day: "day",
  agents: null,
  tools: null,
};

/** A var's text: a whole number, or `unlimited`. */
const VarValue = z
  .string()
  .trim()
  .transform((text, ctx) => {
    if (text === "unlimited") return null;
    if (/^\d{1,13}$/.test(text) && Number(text) <= MAX_LIMIT) return Number(text);
    ctx.addIssue({ code: "custom", message: "must be a whole number or 'unlimited'" });
    return z.NEVER;
  });

/** The deployment's defaults. A var that does not parse is reported and its built-in default stands. */
export function limitsFromVars(vars: QuotaVars): { limits: Limits; warnings: string[] } {
  const limits = { ...BUILT_IN_LIMITS };
  const warnings: string[] = [];
  for (const name of LIMIT_NAMES) {
    const raw = vars[QUOTA_VAR[name]];
    if (raw === undefined || raw === "") continue;
    const parsed = VarValue.safeParse(raw);
    if (parsed.success) limits[name] = parsed.data;
    else warnings.push(`${QUOTA_VAR[name]}=${JSON.stringify(raw)} ignored: ${parsed.error.issues[0]?.message}`);
  }
  return { limits, warnings };
}

/** The tenant's limits: each override in place of its default, and where each value came from. */
export function effectiveLimits(
  defaults: Limits,
  overrides: QuotaOverrides,
): { limits: Limits; sources: Record<LimitName, LimitSource> } {
  const limits = { ...defaults };
  const sources = Object.fromEntries(LIMIT_NAMES.map((name) => [name, "default"])) as Record<LimitName, LimitSource>;
  for (const name of LIMIT_NAMES) {
    const value = overrides[name];
    if (value === undefined) continue;
    limits[name] = value;
    sources[name] = "override";
  }
  return { limits, sources };
}
