/**
 * The context window a model has, for an agent whose `memory.max_input_tokens` is absent
 * (docs/memory.md, Budgets). Known families by name prefix, longest first; a Workers AI model
 * not listed gets a short window and any other model a middling one, so a budget errs on the
 * side of compacting early. An agent on a model not listed should set its budget.
 */
const WINDOWS: readonly [prefix: string, tokens: number][] = [
  ["gpt-4.1", 1_047_576],
  ["gpt-5", 272_000],
  ["gpt-4o", 128_000],
  ["gpt-4-turbo", 128_000],
  ["gpt-4", 8_192],
  ["gpt-3.5-turbo", 16_385],
  ["o1", 200_000],
  ["o3", 200_000],
  ["o4", 200_000],
  ["claude", 200_000],
  ["gemini", 1_000_000],
  ["@cf/meta/llama-3.3-70b-instruct-fp8-fast", 24_000],
  ["@cf/meta/llama-3.1-8b-instruct-fast", 128_000],
  ["@cf/meta/llama-4-scout-17b-16e-instruct", 131_000],
  ["@cf/qwen/qwq-32b", 24_000],
  ["@cf/mistralai/mistral-small-3.1-24b-instruct", 128_000],
];

/** The offline `local` stand-in: small, so the demo shows compaction in a conversation of minutes. */
export const LOCAL_WINDOW = 8_192;
/** A Workers AI model not listed above. */
export const WORKERS_AI_WINDOW = 8_000;
/** Any other model not listed. */
export const UNKNOWN_WINDOW = 32_768;

/** A model's context window in tokens, by its name. */
export function contextWindow(model: string): number {
  if (model === "local") return LOCAL_WINDOW;
  const name = model.toLowerCase();
  let best: [string, number] | undefined;
  for (const entry of WINDOWS) if (name.startsWith(entry[0]) && entry[0].length > (best?.[0].length ?? 0)) best = entry;
  if (best) return best[1];
  return name.startsWith("@cf/") || name.startsWith("@hf/") ? WORKERS_AI_WINDOW : UNKNOWN_WINDOW;
}
