import { memoryCompacted } from "../../../src/audit/compaction-events";
import { factDeleted, factWritten } from "../../../src/audit/fact-events";
import { type AuditRecord, agentActor, SYSTEM_ACTOR } from "../../../src/audit/record";
import { type ErrorBody, err, ok, type Result } from "../../../src/errors";
import { ulid } from "../../../src/lib/ulid";
import { type TurnBudget, turnBudget } from "../../../src/memory/budget";
import { applyFactChange, factCall } from "../../../src/memory/facts";
import { summaryChunks, summaryItem, summaryRequest, trimNote } from "../../../src/memory/summary";
import {
  type CountTokens,
  itemTokens,
  MESSAGE_OVERHEAD,
  REPLY_OVERHEAD,
  toolsTokens,
  utf8Length,
} from "../../../src/memory/tokens";
import {
  fitTokens,
  READ_TOOL_OUTPUT,
  READ_TOOL_OUTPUT_SPEC,
  readToolOutput,
  viewOutput,
} from "../../../src/memory/tool-output";
import { coveredRange, planView, type ViewEntry } from "../../../src/memory/view";
import type { ToolCall, ToolSpec } from "../../../src/providers/types";
import { toolOutput } from "../../../src/runtime/interpret";
import { traceEvent } from "../../../src/runtime/run-record";
import { callSummary } from "../../../src/runtime/summary-call";
import { heldContext, planTurn, type TurnPlan, turnTimeoutMs } from "../../../src/runtime/turn";
import type { AgentDefinition } from "../../../src/schemas/agent";
import type { HandoffContext, HistoryItem } from "../../../src/schemas/handoff";
import { COMPACTION_FORMAT, type Compaction } from "../../../src/schemas/memory";
import type { TraceEvent } from "../../../src/schemas/run";
import type { AgentModels } from "../../../src/services/agent-models";
import type { AgentDirectory } from "../../../src/services/registry-cache";
import { loadTokenizer } from "../../../src/services/tokenizer";
import { type SessionRecord, touch } from "../../../src/sessions/model";
import type { RunRow, RunStore } from "../runs/run-store";
import { turnContext } from "../runs/run-trace";
import { auditScope, type SessionKernel } from "../session-kernel";

/**
 * What an agent's turn sends of its conversation (docs/memory.md): its view read from where
 * its latest compaction ends, counted against its budget — by a cheap upper bound first, by
 * the tokenizer only when that bound does not fit — large tool outputs cut, and, past the
 * threshold, a new compaction made (a summary by a model call, or a trim) and written in one
 * transaction before the turn goes out. A crash before that commit leaves the old view.
 */

export interface PrepareInput {
  row: RunRow;
  session: SessionRecord;
  agent: AgentDefinition;
  directory: AgentDirectory;
  models: AgentModels;
  /** The session memory's prompt section, if it holds facts. */
  facts: string | null;
  /** The memory tools the agent is offered whatever its view (`remember`, `forget`). */
  tools: readonly ToolSpec[];
  /** Moves the run's watchdog past a summary call about to be made (it may take `ms`). */
  beforeSummary: (ms: number) => Promise<void>;
  /** Whether the run may still carry on (after the summary call). */
  continuing: () => boolean;
}

/** What the memory's tools answered: their outputs, and the writes to make with the step. */
export interface MemoryAnswers {
  outputs: HistoryItem[];
  /** The audit records of the facts written or deleted. */
  records: AuditRecord[];
  write: () => void;
}

/** A turn ready to go: its plan, and the compaction made for it (already written), if any. */
export interface PreparedTurn {
  plan: TurnPlan;
  compaction: Compaction | null;
  /** Input tokens as counted (an upper bound when the tokenizer was not needed). */
  tokens: number;
  /** Tokens counted for messages stored without them, not written yet (the caller writes them). */
  counted: ReadonlyMap<number, number>;
}

/** Where an agent's view starts: the handoff it holds the session through, and the items that came with it. */
interface ViewStart {
  context: HandoffContext | null;
  handoffId: string | null;
  /** The session messages before this are not in the view (the context stands for them). */
  since: number;
}

function viewStart(agent: string, session: SessionRecord): ViewStart {
  const context = heldContext(agent, session);
  const since = context?.metadata.history_length;
  if (!context || since === undefined) return { context: null, handoffId: null, since: 0 };
  return { context, handoffId: context.metadata.handoff_id, since };
}

export class ConversationMemory {
  constructor(
    private readonly k: Pick<
      SessionKernel,
      "checkpoint" | "commit" | "compactions" | "env" | "memory" | "now" | "store"
    >,
    private readonly runs: Pick<RunStore, "addEvents" | "events">,
  ) {}

  /** The agent's turn, within its budget; CONTEXT_TOO_LARGE when it cannot be, or the summary's failure. */
  async prepare(input: PrepareInput): Promise<Result<PreparedTurn | null>> {
    const { agent, session, models } = input;
    const model = agent.model ?? models.default_model;
    const budget = turnBudget(agent, model);
    const start = viewStart(agent.name, session);
    // Only a model agent's view is compacted: a webhook or remote agent keeps its own context.
    const compacting = agent.kind === "llm";
    const previous = compacting ? this.k.compactions.latest(agent.name, start.handoffId) : null;
    const stored = this.k.store.history({ after: Math.max(start.since, previous?.through_seq ?? 0) });
    const context = (start.context?.conversation_history ?? []).slice(previous?.context_items ?? 0);
    const raw: { item: HistoryItem; seq: number | null; tokens: number | null }[] = [
      ...context.map((item) => ({ item, seq: null, tokens: null })),
      ...stored,
    ];
    const plan = (view: readonly HistoryItem[], cut: boolean) =>
      planTurn({
        run_id: input.row.run.id,
        agent,
        directory: input.directory.byName,
        registry_tools: input.directory.tools,
        session,
        view,
        default_model: models.default_model,
        facts: input.facts,
        memory_tools: cut ? [READ_TOOL_OUTPUT_SPEC, ...input.tools] : input.tools,
      });
    if (!compacting) {
      const view = raw.map((r) => r.item);
      return ok({ plan: plan(view, false), compaction: null, tokens: 0, counted: new Map() });
    }
    // `cut`: large tool outputs are cut to their share; `exact`: the counts made are kept with the messages.
    const measure = (count: CountTokens, { cut: cutting, exact }: { cut: boolean; exact: boolean }) => {
      const counted = new Map<number, number>();
      let cut = false;
      const entries: ViewEntry[] = raw.map((r) => {
        let tokens = r.tokens ?? itemTokens(r.item, count);
        if (exact && r.tokens === null && r.seq !== null) counted.set(r.seq, tokens);
        let item = r.item;
        if (cutting && item.role === "tool" && tokens > budget.max_tool_output_tokens) {
          const shown = viewOutput(item, budget.max_tool_output_tokens, count);
          if (shown.cut) {
            cut = true;
            item = shown.item;
            tokens = itemTokens(item, count);
          }
        }
        return { item, seq: r.seq, tokens };
      });
      const summary = previous ? summaryItem(previous) : null;
      const turn = plan([], cut);
      const fixed =
        count(turn.request.messages[0]!.content ?? "") +
        MESSAGE_OVERHEAD +
        toolsTokens(turn.request.tools, count) +
        REPLY_OVERHEAD;
      return { entries, counted, cut, fixed, summary, summaryTokens: summary ? itemTokens(summary, count) : 0 };
    };
    // The upper bound first: a view that fits by it needs no tokenizer, and has no output to cut.
    const bound = measure(utf8Length, { cut: false, exact: false });
    const rough = planView({ fixed: bound.fixed, summary: bound.summaryTokens, entries: bound.entries, budget });
    const outputsFit = bound.entries.every((e) => e.item.role !== "tool" || e.tokens <= budget.max_tool_output_tokens);
    // Without the tokenizer (its table unreadable) the bound stands in: outputs are cut by it, and no count is kept.
    const tokenizer = rough.kind === "fits" && outputsFit ? null : await loadTokenizer(this.k.env.ASSETS);
    const measured = tokenizer ? measure(tokenizer.count, { cut: true, exact: tokenizer.exact }) : bound;
    const view = planView({
      fixed: measured.fixed,
      summary: measured.summaryTokens,
      entries: measured.entries,
      budget,
    });
    const items = (entries: readonly ViewEntry[], summary: HistoryItem | null) =>
      summary ? [summary, ...entries.map((e) => e.item)] : entries.map((e) => e.item);
    if (view.kind === "fits")
      return ok({
        plan: plan(items(measured.entries, measured.summary), measured.cut),
        compaction: null,
        tokens: view.tokens,
        counted: measured.counted,
      });
    if (view.kind === "too_large") return tooLarge(view.tokens, budget);
    const { count } = await loadTokenizer(this.k.env.ASSETS);
    const covered = measured.entries.slice(0, view.cut);
    const kept = measured.entries.slice(view.cut);
    const made = await this.compact(input, budget, previous, covered, count);
    if (!made.ok) {
      // The summary failed: a view that still fits the budget goes out as it is, and is compacted next turn.
      if (view.tokens <= budget.max_input_tokens)
        return ok({
          plan: plan(items(measured.entries, measured.summary), measured.cut),
          compaction: null,
          tokens: view.tokens,
          counted: measured.counted,
        });
      return made;
    }
    if (!input.continuing()) return ok(null);
    const summary = summaryItem(made.value.compaction);
    const tokensAfter = kept.reduce((sum, e) => sum + e.tokens, measured.fixed + itemTokens(summary, count));
    if (tokensAfter > budget.max_input_tokens) return tooLarge(tokensAfter, budget);
    const compaction: Compaction = { ...made.value.compaction, tokens_before: view.tokens, tokens_after: tokensAfter };
    await this.record(input, compaction, measured.counted, made.value.duration_ms);
    return ok({ plan: plan(items(kept, summary), measured.cut), compaction, tokens: tokensAfter, counted: new Map() });
  }

  /** The new compaction's record (its tokens after are filled in by the caller), or the summary's failure. */
  private async compact(
    input: PrepareInput,
    budget: TurnBudget,
    previous: Compaction | null,
    covered: readonly ViewEntry[],
    count: CountTokens,
  ): Promise<Result<{ compaction: Compaction; duration_ms: number }>> {
    const now = this.k.now();
    const range = coveredRange(previous, covered);
    const base = {
      format: COMPACTION_FORMAT,
      id: `cmp_${ulid(now).toLowerCase()}`,
      agent: input.agent.name,
      view: viewStart(input.agent.name, input.session).handoffId,
      ...range,
      tokens_before: 0,
      tokens_after: 0,
      run_id: input.row.run.id,
      created_at: new Date(now).toISOString(),
    } as const;
    if (budget.strategy === "trim") {
      const content = trimNote(range.items);
      return ok({
        compaction: { ...base, strategy: "trim", content, tokens: count(content), model: null },
        duration_ms: 0,
      });
    }
    const provider = input.models.provider;
    if (!provider.ok) return provider;
    const timeout = turnTimeoutMs(input.agent);
    // More than one request's worth is read in pieces, the summary rolled through them.
    const chunks = summaryChunks(
      covered.map((e) => e.item),
      budget.max_input_tokens,
      budget.summary_tokens,
      count,
    );
    await input.beforeSummary(timeout * chunks.length);
    // The summary is made for the turn about to go out, whose span it is sent in (docs/observability.md).
    const trace = turnContext(this.runs, input.row);
    let content = previous?.content ?? null;
    let duration_ms = 0;
    for (const chunk of chunks) {
      const messages = summaryRequest(content, chunk, budget.summary_tokens);
      const result = await callSummary(provider.value, budget.summary_model, messages, timeout, { trace });
      if (!result.ok) return err(result.code, result.message, { during: "compaction" });
      // The model is asked for a length; what it writes past the summary's share is cut.
      content = result.content.slice(0, fitTokens(result.content, budget.summary_tokens, count));
      duration_ms += result.duration_ms;
    }
    const summary = content ?? "";
    return ok({
      compaction: {
        ...base,
        strategy: "summarize",
        content: summary,
        tokens: count(summary),
        model: budget.summary_model,
      },
      duration_ms,
    });
  }

  /**
   * The outputs of a turn's calls to the memory's own tools, in call order, and the writes
   * they make (run inside the step's transaction). Arguments were checked against the tools'
   * parameters when the turn was read.
   */
  async answer(
    session: SessionRecord,
    agent: AgentDefinition,
    model: string,
    calls: readonly ToolCall[],
  ): Promise<MemoryAnswers> {
    const outputs: HistoryItem[] = [];
    const records: AuditRecord[] = [];
    const writes: (() => void)[] = [];
    if (calls.length === 0) return { outputs, records, write: () => undefined };
    const budget = turnBudget(agent, model);
    const now = this.k.now();
    let facts = this.k.memory.list();
    for (const call of calls) {
      if (call.name === READ_TOOL_OUTPUT) {
        const args = JSON.parse(call.arguments) as { call_id: string; offset: number };
        const stored = this.k.store.toolOutput(args.call_id);
        const text = readToolOutput(
          args,
          stored,
          budget.max_tool_output_tokens,
          (await loadTokenizer(this.k.env.ASSETS)).count,
        );
        outputs.push(toolOutput(agent.name, call, text));
        continue;
      }
      // remember and forget: checked against the facts as this turn's earlier calls left them.
      const checked = factCall(call.name, call.arguments, facts);
      const applied = checked.ok ? applyFactChange(facts, checked.change, agent.name, now) : null;
      if (!checked.ok || !applied?.ok) {
        outputs.push(toolOutput(agent.name, call, checked.output));
        continue;
      }
      facts = applied.value;
      const change = checked.change;
      const about = { agent: session.current_agent, key: change.key };
      const scope = auditScope(session);
      if (change.kind === "put") {
        writes.push(() => this.k.memory.put({ key: change.key, value: change.value, agent: agent.name }, now));
        records.push(factWritten(scope, agentActor(agent.name), now, about));
      } else {
        writes.push(() => this.k.memory.remove(change.key));
        records.push(factDeleted(scope, agentActor(agent.name), now, about));
      }
      outputs.push(toolOutput(agent.name, call, checked.output));
    }
    return {
      outputs,
      records,
      write: () => {
        for (const w of writes) w();
      },
    };
  }

  /** The compaction, its trace event and audit record, and the counts made on the way, in one transaction. */
  private async record(
    input: PrepareInput,
    compaction: Compaction,
    counted: ReadonlyMap<number, number>,
    duration_ms: number,
  ): Promise<void> {
    const now = this.k.now();
    const session = this.k.store.load() ?? input.session;
    const event: TraceEvent = traceEvent(
      input.row.run,
      "compaction",
      compaction.agent,
      now,
      {
        ...(compaction.model ? { model: compaction.model } : {}),
        compaction: {
          id: compaction.id,
          strategy: compaction.strategy,
          items: compaction.items,
          tokens_before: compaction.tokens_before,
          tokens_after: compaction.tokens_after,
        },
      },
      duration_ms,
    );
    const record = memoryCompacted(auditScope(session), SYSTEM_ACTOR, now, compaction);
    await this.k.commit(touch(session, now), [record], () => {
      this.k.compactions.insert(compaction);
      this.runs.addEvents([event]);
      this.k.store.setTokens(counted);
      this.k.checkpoint("compaction");
    });
  }
}

function tooLarge(tokens: number, budget: TurnBudget): { ok: false; error: ErrorBody } {
  return err(
    "CONTEXT_TOO_LARGE",
    budget.strategy === "none"
      ? `The turn's input is ${tokens} tokens, past the agent's budget of ${budget.max_input_tokens}, and its memory strategy is none.`
      : `The turn's input is ${tokens} tokens even compacted, past the agent's budget of ${budget.max_input_tokens}.`,
    { tokens, max_input_tokens: budget.max_input_tokens, strategy: budget.strategy },
  );
}
