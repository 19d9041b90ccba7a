import * as z from "zod";

/**
 * What keeps a long conversation within a model's context (docs/memory.md): an agent's
 * memory policy, the compactions a session stores, and the facts its agents remember.
 */

/**
 * How the older part of a view is replaced when a turn's input would pass the threshold:
 * `summarize` (a model call writes a summary), `trim` (the oldest items are left out, no
 * model call), `none` (never; a view over the budget fails the turn with CONTEXT_TOO_LARGE).
 */
export const COMPACTION_STRATEGIES = ["summarize", "trim", "none"] as const;
export const CompactionStrategy = z.enum(COMPACTION_STRATEGIES);
export type CompactionStrategy = z.infer<typeof CompactionStrategy>;

/** An agent's `memory` (docs/memory.md, The policy); every field has a default. */
export const MemoryPolicy = z.strictObject({
  /** The input budget of one turn, in tokens; absent: the model's context window (docs/memory.md, Budgets). */
  max_input_tokens: z.number().int().min(1024).max(10_000_000).optional(),
  /** The share of the budget past which the view is compacted. */
  compact_at: z.number().min(0.2).max(1).default(0.8),
  strategy: CompactionStrategy.default("summarize"),
  /** The most recent items kept verbatim through a compaction. */
  keep_last: z.number().int().min(1).max(500).default(8),
  /** The model that writes summaries; absent: the agent's own. */
  model: z.string().max(200).optional(),
  /** A tool output longer than this (tokens) is cut in what the model sees; `read_tool_output` reads the rest. */
  max_tool_output_tokens: z.number().int().min(64).max(100_000).default(2000),
  /** Offers the `remember` and `forget` tools, which write the session's memory. */
  facts: z.boolean().default(false),
});
export type MemoryPolicy = z.infer<typeof MemoryPolicy>;
export type MemoryPolicyInput = z.input<typeof MemoryPolicy>;

/** The policy an agent without `memory` has. */
export const DEFAULT_MEMORY_POLICY: MemoryPolicy = MemoryPolicy.parse({});

/** The version of a stored compaction's JSON; a change of shape adds one and a reader for the old. */
export const COMPACTION_FORMAT = 1;

/**
 * A compaction (docs/memory.md, Compaction): what replaces the start of one agent's view in
 * what the model sees. The view is the agent's conversation as it was handed to it (`view`:
 * the handoff whose context starts it; null: the session's whole history) and what followed.
 * It covers the first `context_items` of that context and the session's messages up to
 * `through_seq`; nothing is deleted, the stored history stays whole.
 */
export const Compaction = z.strictObject({
  format: z.literal(COMPACTION_FORMAT),
  id: z.string(),
  agent: z.string(),
  view: z.string().nullable(),
  strategy: CompactionStrategy.exclude(["none"]),
  /** The summary the model sees in place of the covered items (for `trim`, a note of what was left out). */
  content: z.string(),
  context_items: z.number().int().min(0),
  /** The first and last session message covered (0 and 0: only context items). */
  from_seq: z.number().int().min(0),
  through_seq: z.number().int().min(0),
  /** Items covered, earlier compactions' included. */
  items: z.number().int().min(0),
  /** The view's input tokens before and after. */
  tokens_before: z.number().int().min(0),
  tokens_after: z.number().int().min(0),
  /** The summary's own tokens. */
  tokens: z.number().int().min(0),
  /** The model that wrote it (`summarize`). */
  model: z.string().nullable(),
  run_id: z.string().nullable(),
  /** ISO 8601. */
  created_at: z.string(),
});
export type Compaction = z.infer<typeof Compaction>;

/** The memory's bounds: facts are short, and all of them go into every prompt. */
export const MEMORY_LIMITS = { facts: 50, key_chars: 64, value_chars: 500, total_chars: 8000 } as const;

export const MemoryKey = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "must be a key: letters, digits, '_', '.' or '-', at most 64");
export type MemoryKey = z.infer<typeof MemoryKey>;

export const MemoryValue = z.string().trim().min(1).max(MEMORY_LIMITS.value_chars);

/** One fact in a session's memory (docs/memory.md, Facts). */
export const MemoryFact = z.strictObject({
  key: MemoryKey,
  value: MemoryValue,
  /** The agent that wrote it, or null when written through the API. */
  agent: z.string().nullable(),
  /** ISO 8601. */
  updated_at: z.string(),
});
export type MemoryFact = z.infer<typeof MemoryFact>;

/** `PUT /v1/sessions/:id/memory/:key`. */
export const MemoryFactWrite = z.strictObject({ value: MemoryValue });
export type MemoryFactWrite = z.infer<typeof MemoryFactWrite>;

/** `GET /v1/sessions/:id/memory`: the facts, and how full the memory is. */
export const MemoryView = z.strictObject({
  facts: z.array(MemoryFact),
  chars: z.number().int().min(0),
  limits: z.strictObject({
    facts: z.number().int(),
    value_chars: z.number().int(),
    total_chars: z.number().int(),
  }),
});
export type MemoryView = z.infer<typeof MemoryView>;

/** `GET /v1/sessions/:id/compactions`: every compaction of the session, oldest first. */
export const CompactionList = z.strictObject({ compactions: z.array(Compaction) });
export type CompactionList = z.infer<typeof CompactionList>;
