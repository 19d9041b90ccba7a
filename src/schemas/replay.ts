import * as z from "zod";
import { AgentDefinition, AgentName } from "./agent";
import { RouteMethod, RoutingConfigPatch } from "./routing";

/**
 * The routing history and replays of a draft team against it (docs/routing.md, Replay): what
 * the router object keeps of each routed session, what a replay asks and what it answers.
 */

/** Bytes of a routed input the history keeps (its start; the rule tier reads little more). */
export const HISTORY_INPUT_BYTES = 2 * 1024;
/** Rows a tenant's history keeps: the newest; a new row drops the oldest past this. */
export const HISTORY_ROWS = 10_000;
/** Inputs of an uploaded set, and their bytes together. */
export const REPLAY_UPLOAD_INPUTS = 2_000;
export const REPLAY_UPLOAD_BYTES = 512 * 1024;
/** Agent definitions a draft may add or replace, and names it may remove. */
export const REPLAY_DRAFT_AGENTS = 100;
/** LLM tier calls a replay may make at most (both routers together). */
export const REPLAY_LLM_CALLS = 20;
/** What a replay may take in all: past it the answer covers the inputs replayed so far. */
export const REPLAY_TIME_BUDGET_MS = 25_000;

/** One routed session as the history keeps it. */
export const RoutedInput = z.object({
  at: z.iso.datetime(),
  session_id: z.string(),
  /** The input's first HISTORY_INPUT_BYTES bytes. */
  input: z.string(),
  agent: AgentName,
  method: RouteMethod,
  confidence: z.number(),
  registry_version: z.number().int(),
});
export type RoutedInput = z.infer<typeof RoutedInput>;

/** Which recorded inputs a replay reads: the newest `limit`, optionally within a time range or of one agent. */
export const HistorySelection = z.strictObject({
  limit: z.number().int().min(1).max(HISTORY_ROWS).default(1_000),
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
  /** Only inputs the router sent to this agent. */
  agent: AgentName.optional(),
});
export type HistorySelection = z.infer<typeof HistorySelection>;

/** The change a replay tries: agents added or replaced, agents removed, a routing config patch. */
export const ReplayDraft = z.strictObject({
  agents: z.array(AgentDefinition).max(REPLAY_DRAFT_AGENTS).default([]),
  /**
   * Agents as Markdown agent files (docs/agents.md, Agent files), read as `PUT /v1/agents/{name}`
   * with `text/markdown` reads them: each file's front matter must name the agent `name` says.
   */
  files: z
    .array(z.strictObject({ name: AgentName, markdown: z.string() }))
    .max(REPLAY_DRAFT_AGENTS)
    .default([]),
  remove: z.array(AgentName).max(REPLAY_DRAFT_AGENTS).default([]),
  config: RoutingConfigPatch.optional(),
});
export type ReplayDraft = z.infer<typeof ReplayDraft>;

/** An uploaded input, with the agent that should take it when known. */
export const LabelledInput = z.strictObject({ input: z.string().min(1), label: AgentName.optional() });
export type LabelledInput = z.infer<typeof LabelledInput>;

export const ReplayRequest = z.strictObject({
  draft: ReplayDraft,
  /** Replay recorded inputs (the default when `inputs` is absent). */
  history: HistorySelection.optional(),
  /** Replay these inputs instead of the history. */
  inputs: z.array(LabelledInput).min(1).max(REPLAY_UPLOAD_INPUTS).optional(),
  /** Let the LLM tier decide what the rules are unsure of, up to `max_calls` calls in all. */
  llm: z.strictObject({ max_calls: z.number().int().min(1).max(REPLAY_LLM_CALLS) }).optional(),
});
export type ReplayRequest = z.infer<typeof ReplayRequest>;

/**
 * Where an input went: an agent's name, `@llm` (the rules were unsure and the LLM tier, not
 * called, would decide) or `@fallback` (the fallback took it and named no agent).
 */
export const ReplayTarget = z.string();

const Example = z.string().describe("An input, cut at 200 characters.");

export const ReplayMove = z.object({
  from: ReplayTarget,
  to: ReplayTarget,
  count: z.number().int(),
  examples: z.array(Example),
});
export type ReplayMove = z.infer<typeof ReplayMove>;

export const ReplayShift = z.object({
  input: Example,
  from: ReplayTarget,
  to: ReplayTarget,
  before: z.number(),
  after: z.number(),
  delta: z.number(),
});
export type ReplayShift = z.infer<typeof ReplayShift>;

export const ReplayScore = z.object({
  /** Labelled inputs sent to their label. */
  accuracy: z.number(),
  /** Labelled inputs sent to an agent by a tier (not the fallback, not waiting for the LLM). */
  coverage: z.number(),
  /** Of those covered, the share sent to their label (null when none was covered). */
  precision: z.number().nullable(),
});
export type ReplayScore = z.infer<typeof ReplayScore>;

export const ReplayReport = z.object({
  source: z.enum(["history", "inputs"]),
  /** The registry version the current router was built from (the draft applies to it). */
  registry_version: z.number().int(),
  totals: z.object({
    /** Inputs selected, and those replayed (fewer when the time budget ran out: `complete` false). */
    inputs: z.number().int(),
    replayed: z.number().int(),
    complete: z.boolean(),
    moved: z.number().int(),
    llm_calls: z.number().int(),
    /** Inputs each router left to the LLM tier uncalled. */
    would_ask_llm: z.object({ current: z.number().int(), draft: z.number().int() }),
  }),
  /** Confusion pairs, the largest first. */
  moves: z.array(ReplayMove),
  fallback: z.object({
    entered: z.object({ count: z.number().int(), examples: z.array(Example) }),
    left: z.object({ count: z.number().int(), examples: z.array(Example) }),
  }),
  confidence: z.object({
    mean_delta: z.number(),
    median_delta: z.number(),
    largest: z.array(ReplayShift),
  }),
  /** With labelled inputs: how the current and the draft router score on them. */
  labelled: z.object({ count: z.number().int(), before: ReplayScore, after: ReplayScore }).optional(),
  timings: z.object({ build_ms: z.number(), replay_ms: z.number() }),
});
export type ReplayReport = z.infer<typeof ReplayReport>;

/**
 * `GET /v1/route/history`'s filters: `low_confidence` is a decision whose rule-tier confidence is
 * below the tenant's routing threshold now (the rules alone would not take it: the LLM tier or
 * the fallback did); `fallback` is one the fallback gave to its default agent.
 */
export const HistoryKind = z.enum(["low_confidence", "fallback"]);
export type HistoryKind = z.infer<typeof HistoryKind>;

/** Rows of the history per page, at most. */
export const HISTORY_PAGE_ROWS = 200;

/** What the history list reads of the router object: filters, a threshold for `low_confidence`, where to start. */
export interface HistoryPageQuery {
  agent?: string;
  kind?: HistoryKind;
  threshold: number;
  limit: number;
  /** Rows older than this seq (a previous page's last). */
  before?: number;
}

/** One recorded input as the list answers it: the decision, and what the filters read of it. */
export const RoutedInputItem = RoutedInput.extend({
  /** The fallback took it (and gave it to its default agent). */
  fallback: z.boolean(),
  /** Its confidence is below the tenant's threshold (`threshold` beside the items). */
  low_confidence: z.boolean(),
});
export type RoutedInputItem = z.infer<typeof RoutedInputItem>;

export const RoutedInputPage = z.strictObject({
  items: z.array(RoutedInputItem),
  next_cursor: z.string().nullable(),
  /** The tenant's routing threshold now, which `low_confidence` is read against. */
  threshold: z.number(),
});
export type RoutedInputPage = z.infer<typeof RoutedInputPage>;

export const HistoryCleared = z.object({ deleted: z.number().int() });
export type HistoryCleared = z.infer<typeof HistoryCleared>;
