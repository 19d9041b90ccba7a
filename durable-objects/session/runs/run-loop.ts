import { SYSTEM_ACTOR } from "../../../src/audit/record";
import type { ErrorBody } from "../../../src/errors";
import { memoryPolicy } from "../../../src/memory/budget";
import { factsPrompt, factToolSpecs } from "../../../src/memory/facts";
import { type CountedItem, MESSAGE_OVERHEAD } from "../../../src/memory/tokens";
import type { TokenUsage } from "../../../src/providers/types";
import { interpretTurn } from "../../../src/runtime/interpret";
import { RUN_WAIT_MS, turnStepMs } from "../../../src/runtime/run-deadlines";
import { callDetails, executorOf, traceArgs, traceEvent } from "../../../src/runtime/run-record";
import { planWork } from "../../../src/runtime/tool-work";
import type { AgentDefinition } from "../../../src/schemas/agent";
import type { HistoryItem } from "../../../src/schemas/handoff";
import type { TraceEvent } from "../../../src/schemas/run";
import { agentModels } from "../../../src/services/agent-models";
import { type AgentDirectory, agentDirectory } from "../../../src/services/registry-cache";
import { countToolCalls } from "../../../src/services/usage-meter";
import type { SessionRecord } from "../../../src/sessions/model";
import type { ConversationMemory } from "../memory/conversation-memory";
import type { SessionKernel } from "../session-kernel";
import type { RemoteThreads } from "./remote-threads";
import type { RunAnswer } from "./run-answer";
import type { RunCalls } from "./run-calls";
import { executeTurn } from "./run-executor";
import { withMcpTools } from "./run-mcp";
import type { RunPauses } from "./run-pauses";
import type { RunSteps } from "./run-steps";
import type { RunRow } from "./run-store";
import { cutMessage, type RunStreams } from "./run-streams";
import { turnContext } from "./run-trace";

/** The model's answer as stored: with the provider's count of it, when it gave one (docs/memory.md). */
function assistantItem(item: HistoryItem, usage: TokenUsage | undefined): CountedItem {
  return usage ? { ...item, tokens: usage.completion_tokens + MESSAGE_OVERHEAD } : item;
}

/**
 * The loop that drives a run: the current agent's turn, repeated while it calls tools and
 * continued by the target after a handoff, until a final answer, a pause (a person, an
 * approval, the client's tool outputs), or max_turns. What each response means and what its
 * calls need next is decided in src/runtime; this file takes the turns, run-calls.ts the
 * calls, run-pauses.ts the pauses and run-answer.ts the final answer, each step written by
 * run-steps.ts.
 */
export class RunLoop {
  /** Runs whose loop runs in this instance; an active run not in here was left by a restart. */
  private readonly driving = new Map<string, Promise<void>>();

  constructor(
    private readonly k: Pick<SessionKernel, "env" | "live" | "memory" | "now" | "store" | "transaction">,
    private readonly steps: RunSteps,
    private readonly calls: RunCalls,
    private readonly pauses: RunPauses,
    private readonly answer: RunAnswer,
    private readonly streams: RunStreams,
    private readonly threads: RemoteThreads,
    private readonly memory: ConversationMemory,
  ) {}

  private get store() {
    return this.steps.store;
  }

  /** True while this instance's loop drives the run. */
  isDriving(runId: string): boolean {
    return this.driving.has(runId);
  }

  /** Drives the run until it ends or pauses, or RUN_WAIT_MS passes (the loop goes on). */
  async waitFor(runId: string): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.drive(runId), new Promise((resolve) => (timer = setTimeout(resolve, RUN_WAIT_MS)))]);
    clearTimeout(timer);
  }

  /** Drives a run until it ends or pauses; one loop per run per instance. */
  drive(runId: string): Promise<void> {
    const existing = this.driving.get(runId);
    if (existing) return existing;
    const loop = this.loop(runId)
      .catch(async (error: unknown) => {
        console.error(`run ${runId}: the loop failed`, error);
        await this.steps
          .finish(
            runId,
            "failed",
            { error: { code: "INTERNAL", message: "The run failed on an internal error." } },
            { actor: SYSTEM_ACTOR },
          )
          .catch(() => undefined);
      })
      .finally(() => this.driving.delete(runId));
    this.driving.set(runId, loop);
    return loop;
  }

  private async loop(runId: string): Promise<void> {
    for (;;) {
      const row = this.store.get(runId);
      if (row?.run.status !== "running") return;
      const loaded = this.k.live();
      if (!loaded.ok) return;
      const session = loaded.value;
      let directory: AgentDirectory;
      try {
        directory = await agentDirectory(this.k.env.DB, session.tenant);
      } catch (error) {
        await this.steps.finish(runId, "failed", {
          error: {
            code: "DEPENDENCY_UNAVAILABLE",
            message: "The agent registry could not be read.",
            details: { reason: String(error) },
          },
        });
        return;
      }
      const named = directory.byName.get(session.current_agent);
      if (!named?.enabled) {
        const error: ErrorBody = named
          ? {
              code: "AGENT_UNAVAILABLE",
              message: `Agent '${session.current_agent}' is disabled.`,
              details: { agent: session.current_agent, reason: "disabled" },
            }
          : {
              code: "AGENT_NOT_FOUND",
              message: `Agent '${session.current_agent}' is not in the registry.`,
              details: { agent: session.current_agent },
            };
        await this.steps.finish(runId, "failed", { error }, { actor: SYSTEM_ACTOR, agent: session.current_agent });
        return;
      }
      // The MCP servers its tools.allow names stand for their tools (docs/mcp.md).
      const expanded = await withMcpTools(this.k.env, session.tenant, directory, named, () =>
        turnContext(this.store, row),
      );
      if (!expanded.ok) {
        await this.steps.finish(runId, "failed", { error: expanded.error }, { actor: SYSTEM_ACTOR, agent: named.name });
        return;
      }
      const agent = expanded.agent;
      directory = expanded.directory;
      if (row.work) {
        if (!(await this.calls.carryOut(row, row.work, agent, directory))) return;
        continue;
      }
      if (agent.kind === "human") {
        await this.pauses.awaitHuman(row, session, agent, null, `'${agent.name}' answers from the inbox.`);
        return;
      }
      if (row.run.turns >= row.run.max_turns) {
        await this.steps.finish(runId, "failed", {
          error: {
            code: "MAX_TURNS_EXCEEDED",
            message: `The run reached max_turns (${row.run.max_turns}) without a final answer.`,
            details: { max_turns: row.run.max_turns },
          },
        });
        return;
      }
      if (!(await this.turn(row, session, agent, directory))) return;
    }
  }

  /** One turn of a model or webhook agent; false when the run ended or paused. */
  private async turn(
    row: RunRow,
    session: SessionRecord,
    agent: AgentDefinition,
    directory: AgentDirectory,
  ): Promise<boolean> {
    const models = await agentModels(this.k.env, session.tenant);
    // The view within the agent's budget, compacted first when it must be (docs/memory.md).
    const prepared = await this.memory.prepare({
      row,
      session,
      agent,
      directory,
      models,
      facts: factsPrompt(this.k.memory.list()),
      tools: memoryPolicy(agent).facts ? factToolSpecs() : [],
      beforeSummary: (ms) => this.steps.record(row, this.k.now(), ms).then(() => undefined),
      continuing: () => this.steps.continuing(row.run.id) !== null,
    });
    if (!prepared.ok || prepared.value === null) {
      if (!prepared.ok && this.steps.continuing(row.run.id))
        await this.steps.finish(row.run.id, "failed", { error: prepared.error }, { agent: agent.name });
      return false;
    }
    const { plan, counted } = prepared.value;
    // Counted once: a message's count is kept, so no later turn counts it again.
    if (counted.size > 0) this.k.transaction(() => this.k.store.setTokens(counted));
    const now = this.k.now();
    const started = await this.steps.record(
      { ...row, run: { ...row.run, agent: agent.name, turns: row.run.turns + 1 }, step: "turn" },
      now,
      turnStepMs(agent),
    );
    // A model's answer streams as it is written; a webhook's comes whole.
    const writing = agent.kind === "webhook" ? null : this.streams.begin(session.id, row.run.id, agent.name);
    const result = await executeTurn(this.k.env, {
      agent,
      request: plan.request,
      models,
      turn: started.run.turns,
      tenant: session.tenant,
      writing,
      threads: this.threads,
      trace: turnContext(this.store, started),
    });
    this.streams.end(row.run.id);
    const after = this.k.now();
    const executor = executorOf(agent);
    if (!result.ok) {
      // Cancelled meanwhile: the cancel kept what was written and ended the run.
      if (!this.steps.continuing(row.run.id)) return false;
      const event = traceEvent(
        started.run,
        "agent_error",
        agent.name,
        after,
        callDetails(executor, plan.request.model, result),
        result.duration_ms,
        result.code,
      );
      await this.steps.finish(
        row.run.id,
        "failed",
        { error: { code: result.code, message: result.message } },
        { agent: agent.name, events: [event], items: writing ? cutMessage(writing) : [] },
      );
      return false;
    }
    const decision = interpretTurn(agent.name, result.response, plan.tools);
    countToolCalls(this.k.env, session.tenant, decision.calls.length);
    // The stored answer has the id its streamed pieces had.
    if (writing) decision.assistant.id = writing.message_id;
    const usage = result.response.usage;
    // Registry tool calls get their trace event when they run (or are decided); the rest now.
    const runLater = new Set(decision.calls.map((c) => c.call.id));
    const events: TraceEvent[] = [
      traceEvent(
        started.run,
        "llm_call",
        agent.name,
        after,
        callDetails(executor, result.model, result),
        result.duration_ms,
      ),
      ...result.response.tool_calls
        .filter((c) => !runLater.has(c.id))
        .map((call) =>
          traceEvent(started.run, "tool_call", agent.name, after, {
            tool_name: call.name,
            tool_args: traceArgs(call.arguments),
          }),
        ),
    ];
    // A remote agent asked for input: the run waits for the session's next message (docs/a2a.md).
    if (result.input_required) {
      const thread = this.threads.get(agent.name);
      if (!this.steps.continuing(row.run.id) || !thread.task_id || !thread.context_id) return false;
      await this.pauses.awaitInput(started, agent, decision.assistant, events, {
        task_id: thread.task_id,
        context_id: thread.context_id,
      });
      return false;
    }
    if (decision.action.type === "final")
      return this.answer.complete(started, agent, decision.action.output, decision.assistant, events, { plan, models });
    // The session may have ended while the agent was thinking: its answer goes nowhere.
    const current = this.steps.continuing(row.run.id);
    if (!current) return false;
    const work = planWork(agent, decision);
    const memory = await this.memory.answer(current, agent, plan.request.model, decision.memory_calls);
    await this.steps.commitStep(
      current,
      { ...started, step: work ? "tools" : "turn", work },
      {
        items: [assistantItem(decision.assistant, usage), ...decision.outputs, ...memory.outputs],
        events,
        records: memory.records,
        now: this.k.now(),
        stepMs: 0,
        extra: memory.write,
      },
    );
    return true;
  }
}
