import type { HandoffContext, HandoffRequest, HistoryItem } from "../schemas/handoff";
import { applyFilters, describeFilters } from "./filters";
import type { ValidatedHandoff } from "./validate";

/** The HandoffContext a target receives and its prompt's preamble (docs/handoffs.md, What the target receives). */

export interface BuildContextInput {
  request: HandoffRequest;
  validated: Pick<ValidatedHandoff, "mode" | "source" | "target" | "chain" | "include_context" | "filter">;
  handoff_id: string;
  /** Ties related handoffs together in logs and audit; defaults to the handoff id. */
  correlation_id?: string;
  /** Epoch ms. */
  now: number;
  /** The session's stored history, used when the request carries no conversation_history. */
  session_history?: readonly HistoryItem[];
  /** How many items the session's history has at the switch (metadata.history_length). */
  history_length?: number;
}

/** Builds the context: the request's fields, the history after the handoff's filters, and metadata. */
export function buildHandoffContext(input: BuildContextInput): HandoffContext {
  const { request, validated } = input;
  const history = request.conversation_history ?? input.session_history ?? [];
  return {
    from_agent: validated.source,
    to_agent: validated.target,
    reason: request.reason,
    summary: request.summary ?? null,
    context: request.context ?? {},
    payload: request.payload ?? {},
    task: request.task ?? null,
    conversation_history: applyFilters(history, validated.filter, validated.include_context),
    metadata: {
      timestamp: new Date(input.now).toISOString(),
      handoff_chain: [...validated.chain],
      chain_depth: Math.max(0, validated.chain.length - 1),
      correlation_id: input.correlation_id ?? input.handoff_id,
      handoff_id: input.handoff_id,
      mode: validated.mode,
      history_filters: describeFilters(validated.filter, validated.include_context),
      ...(input.history_length === undefined ? {} : { history_length: input.history_length }),
    },
  };
}

/** JSON blocks in the preamble are cut at this many characters: the prompt is not the place for bulk data. */
export const PREAMBLE_JSON_LIMIT = 4000;

function json(value: unknown): string {
  const text = JSON.stringify(value, null, 2);
  return text.length > PREAMBLE_JSON_LIMIT ? `${text.slice(0, PREAMBLE_JSON_LIMIT)}\n… (truncated)` : text;
}

const FILTER_WORDS: Record<string, string> = {
  "history:nested": "nested into one summary message",
  "history:summary": "the handing agent's latest summary and what followed it, in one message",
  remove_tool_items: "tool calls and outputs removed",
  redact_pii: "personal data (cards, SSNs, e-mails, phone numbers) masked",
};

function describeFilter(name: string): string {
  if (name.startsWith("max_history:"))
    return `at most ${name.slice("max_history:".length)} items kept (the first 2 and the most recent)`;
  return FILTER_WORDS[name] ?? name;
}

/**
 * The text the target agent's prompt starts with: who handed over and why, the summary,
 * the task and its state, context and payload, the chain, and what was done to the history.
 */
export function handoffPreamble(context: HandoffContext): string {
  const { metadata } = context;
  const lines: string[] = ["# Handoff"];
  lines.push(
    metadata.mode === "return"
      ? `Agent '${context.from_agent}' has returned the conversation to you ('${context.to_agent}'). Pick up where you left off.`
      : `Agent '${context.from_agent}' has handed the conversation over to you ('${context.to_agent}'). You are now responsible for it.`,
  );
  lines.push(`Reason: ${context.reason}`);
  if (context.summary) lines.push(`Summary: ${context.summary}`);
  if (context.task) {
    const state = typeof context.task.task_state === "string" ? context.task.task_state : json(context.task.task_state);
    lines.push(`Task ${context.task.task_id} — state: ${state}`);
  }
  if (Object.keys(context.context).length > 0) lines.push(`Context:\n${json(context.context)}`);
  if (Object.keys(context.payload).length > 0) lines.push(`Payload:\n${json(context.payload)}`);
  lines.push(`Handoff chain: ${metadata.handoff_chain.join(" → ")} (depth ${metadata.chain_depth}).`);
  lines.push(historyNote(context));
  return lines.join("\n");
}

function historyNote(context: HandoffContext): string {
  const filters = context.metadata.history_filters;
  if (filters.includes("include_context:false") || filters.includes("history:none")) {
    return "The earlier conversation was not passed on; ask the user for anything you need.";
  }
  const count = context.conversation_history.length;
  const base = `${count} earlier conversation item${count === 1 ? "" : "s"} follow${count === 1 ? "s" : ""}`;
  return filters.length === 0
    ? `${base}.`
    : `${base}; the history was filtered: ${filters.map(describeFilter).join("; ")}.`;
}
