import type { ModelUsage, UsageCounts } from "../schemas/usage";

/**
 * Usage as counters that add: what one isolate counted, one hour of a tenant, a period's
 * total. Pure; the tenant's object keeps one of these per hour (docs/operations.md, Usage).
 */

/** The plain counters of UsageCounts. */
export const COUNTERS = [
  "requests",
  "sessions",
  "runs",
  "handoffs",
  "tool_calls",
  "model_calls",
  "input_tokens",
  "output_tokens",
  "d1_rows_written",
  "d1_bytes_written",
] as const;
export type Counter = (typeof COUNTERS)[number];

/** A model's calls in a Usage, keyed by `modelKey`. */
export interface ModelCounts {
  calls: number;
  input_tokens: number;
  output_tokens: number;
}

/** Counters that add; any left out is 0. */
export interface Usage {
  counts: Partial<Record<Counter, number>>;
  refused: Record<string, number>;
  models: Record<string, ModelCounts>;
}

/**
 * The most models one hour keeps apart: a tenant names its agents' models freely, so past this
 * many, further ones are counted together under OTHER_MODEL (the totals stay exact).
 */
export const MAX_MODELS = 50;
export const OTHER_MODEL = "other\u0000other";

export const modelKey = (provider: string, model: string): string => `${provider}\u0000${model}`;

export const emptyUsage = (): Usage => ({ counts: {}, refused: {}, models: {} });

/** `into` with `more` added (in place), and returned. */
export function addUsage(into: Usage, more: Usage): Usage {
  for (const [name, n] of Object.entries(more.counts) as [Counter, number][])
    into.counts[name] = (into.counts[name] ?? 0) + n;
  for (const [limit, n] of Object.entries(more.refused)) into.refused[limit] = (into.refused[limit] ?? 0) + n;
  for (const [key, m] of Object.entries(more.models)) {
    const known = Object.hasOwn(into.models, key) || Object.keys(into.models).length < MAX_MODELS;
    const slot = known ? key : OTHER_MODEL;
    const held = into.models[slot] ?? { calls: 0, input_tokens: 0, output_tokens: 0 };
    into.models[slot] = held;
    held.calls += m.calls;
    held.input_tokens += m.input_tokens;
    held.output_tokens += m.output_tokens;
  }
  return into;
}

/** One model call: counted with its tokens (0 when the provider did not say). */
export function modelCall(
  provider: string,
  model: string,
  tokens: { input: number; output: number } | undefined,
): Usage {
  const input_tokens = tokens?.input ?? 0;
  const output_tokens = tokens?.output ?? 0;
  return {
    counts: { model_calls: 1, input_tokens, output_tokens },
    refused: {},
    models: { [modelKey(provider, model)]: { calls: 1, input_tokens, output_tokens } },
  };
}

/** A usage of plain counters only. */
export const counted = (counts: Partial<Record<Counter, number>>): Usage => ({ counts, refused: {}, models: {} });

/** A refusal for `limit`. */
export const refusedFor = (limit: string): Usage => ({ counts: {}, refused: { [limit]: 1 }, models: {} });

/** True when nothing is counted. */
export function isEmpty(usage: Usage): boolean {
  return (
    Object.values(usage.counts).every((n) => !n) &&
    Object.keys(usage.refused).length === 0 &&
    Object.keys(usage.models).length === 0
  );
}

/** A usage as the API shows it: every counter, models in order of calls. */
export function toCounts(usage: Usage): UsageCounts {
  const counts = Object.fromEntries(COUNTERS.map((name) => [name, usage.counts[name] ?? 0])) as Record<Counter, number>;
  const models: ModelUsage[] = Object.entries(usage.models)
    .map(([key, m]) => {
      const [provider, model] = key.split("\u0000") as [string, string];
      return { provider, model, ...m };
    })
    .sort((a, b) => b.calls - a.calls || a.provider.localeCompare(b.provider) || a.model.localeCompare(b.model));
  return { ...counts, refused: { ...usage.refused }, models };
}
