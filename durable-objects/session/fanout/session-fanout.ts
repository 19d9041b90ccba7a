import { auditEvent, messageAdded } from "../../../src/audit/events";
import type { Actor, AuditRecord } from "../../../src/audit/record";
import { decomposeByRules } from "../../../src/collaboration/decompose";
import {
  admitResult,
  aggregate,
  moveFanout,
  outcomeOf,
  pendingTasks,
  TASK_TIMEOUT,
} from "../../../src/collaboration/fanout";
import { err, ok, type Result } from "../../../src/errors";
import { ulid } from "../../../src/lib/ulid";
import { oneTurn } from "../../../src/outbound/one-turn";
import { compileRules } from "../../../src/routing/rules";
import { RUN_WAIT_MS } from "../../../src/runtime/run-deadlines";
import type { AgentDefinition } from "../../../src/schemas/agent";
import type {
  AgentResult,
  AgentTask,
  Fanout,
  FanoutStart,
  TaskDecomposition,
} from "../../../src/schemas/collaboration";
import type { HistoryItem } from "../../../src/schemas/handoff";
import { type AgentModels, agentModels } from "../../../src/services/agent-models";
import { agentOutbound } from "../../../src/services/outbound";
import { agentDirectory } from "../../../src/services/registry-cache";
import { type SessionRecord, touch } from "../../../src/sessions/model";
import type { TraceContext } from "../../../src/telemetry/trace-context";
import type { TimerHandlers } from "../../shared/timers";
import type { RunStore } from "../runs/run-store";
import { turnContext } from "../runs/run-trace";
import { auditScope, type SessionKernel } from "../session-kernel";
import { aggregateWithModel, planWithModel } from "./fanout-models";
import type { FanoutStore } from "./fanout-store";

/**
 * Supervisor fan-out: the session's current agent (the supervisor)
 * splits a request into tasks for agents on its whitelist (its model plans them with a
 * `plan_tasks` call; offline, Relay's rule-based decomposer does), each task runs on its agent in
 * parallel as its own one-turn sub-run within the task's timeout, results are recorded as
 * they come, and the supervisor aggregates them (a model call; Relay's own aggregate when
 * the provider is the offline one or the call fails). The states and the ending rule are
 * src/collaboration/fanout.ts; a deadline timer ends a fan-out a crash left executing. A
 * fan-out a run's turn asked for sends that turn's trace on its tasks' calls and its
 * aggregate (docs/observability.md, Propagation).
 */

/** Past the longest task's timeout, the deadline timer ends what is still executing. */
const DEADLINE_MARGIN_MS = 10_000;

export class SessionFanout {
  constructor(
    private readonly k: Pick<SessionKernel, "commit" | "env" | "live" | "now" | "outbox" | "store" | "timers">,
    private readonly runs: Pick<RunStore, "active" | "get" | "events">,
    private readonly store: FanoutStore,
  ) {}

  get(id: string): Result<Fanout> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const fanout = this.store.load(id);
    return fanout ? ok(fanout) : err("NOT_FOUND", `No fan-out '${id}'.`, { fanout_id: id });
  }

  /** `POST …/fan-out`: starts a fan-out and answers once it has ended, or after RUN_WAIT_MS while it goes on. */
  async start(args: FanoutStart, actor: Actor): Promise<Result<Fanout>> {
    // First: an object with no session (an id of nothing, or another tenant's) has no tables yet.
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const run = this.runs.active();
    if (run)
      return err("RUN_IN_PROGRESS", `Run ${run.run.id} is ${run.run.status}; fan out when it has ended.`, {
        run_id: run.run.id,
        status: run.run.status,
      });
    const begun = await this.begin(args, actor, null);
    if (!begun.ok) return begun;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([begun.value.work, new Promise((resolve) => (timer = setTimeout(resolve, RUN_WAIT_MS)))]);
    clearTimeout(timer);
    return ok(this.store.load(begun.value.id)!);
  }

  /**
   * A supervisor's `fan_out` call in its run: resolves once the fan-out has ended (its tasks have
   * their own timeouts).
   */
  async fromRun(runId: string, decomposition: TaskDecomposition, actor: Actor): Promise<Result<Fanout>> {
    const row = this.runs.get(runId);
    const begun = await this.begin({ decomposition }, actor, runId, row ? turnContext(this.runs, row) : undefined);
    if (!begun.ok) return begun;
    await begun.value.work;
    return ok(this.store.load(begun.value.id)!);
  }

  private async begin(
    args: FanoutStart,
    actor: Actor,
    runId: string | null,
    trace?: TraceContext,
  ): Promise<Result<{ id: string; work: Promise<void> }>> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const directory = await agentDirectory(this.k.env.DB, loaded.value.tenant);
    const supervisor = directory.byName.get(loaded.value.current_agent);
    if (!supervisor)
      return err("AGENT_NOT_FOUND", `Agent '${loaded.value.current_agent}' is not in the registry.`, {
        agent: loaded.value.current_agent,
      });
    const allowed = supervisor.handoffs.map((h) => h.to).filter((name) => directory.byName.get(name)?.enabled);
    const models = await agentModels(this.k.env, loaded.value.tenant);
    let decomposition = args.decomposition;
    let decomposedBy: Fanout["decomposed_by"] = "request";
    if (decomposition === undefined) {
      const candidates = allowed.map((name) => directory.byName.get(name)!);
      const planned = await planWithModel(supervisor, candidates, args.input!, models);
      decomposedBy = planned ? "model" : "rules";
      decomposition = planned ?? decomposeByRules(args.input!, allowed, compileRules(candidates)) ?? undefined;
      if (!decomposition)
        return err("NO_ROUTE", `No part of the request matches an agent '${supervisor.name}' may hand work to.`, {
          allowed,
        });
    }
    const outside = decomposition.tasks.filter((t) => !allowed.includes(t.agent));
    if (outside.length > 0) {
      return err(
        "HANDOFF_NOT_ALLOWED",
        `'${supervisor.name}' may not hand tasks to ${outside.map((t) => `'${t.agent}'`).join(", ")}.`,
        { allowed, refused: outside.map((t) => t.agent) },
      );
    }
    const now = this.k.now();
    const at = new Date(now).toISOString();
    let fanout: Fanout = {
      id: `fan_${ulid(now).toLowerCase()}`,
      session_id: loaded.value.id,
      supervisor: supervisor.name,
      state: "INIT",
      decomposed_by: decomposedBy,
      decomposition,
      results: [],
      response: null,
      states: [{ state: "INIT", at }],
      run_id: runId,
      started_at: at,
      ended_at: null,
    };
    fanout = moveFanout(moveFanout(fanout, "DECOMPOSED", now), "EXECUTING", now);
    const deadline = now + Math.max(...decomposition.tasks.map((t) => t.timeout_s)) * 1000 + DEADLINE_MARGIN_MS;
    const items: HistoryItem[] = args.input ? [{ role: "user", type: "message", content: args.input }] : [];
    await this.commit(
      loaded.value,
      fanout,
      items,
      actor,
      [
        this.record(loaded.value, fanout, "fanout.started", actor, now, {
          tasks: decomposition.tasks.map((t) => ({ task_id: t.task_id, agent: t.agent })),
        }),
      ],
      () => {
        this.k.timers.schedule("fanout.deadline", deadline, { fanout_id: fanout.id }, { key: `fanout:${fanout.id}` });
      },
    );
    const tasks = decomposition.tasks;
    const work = Promise.all(
      tasks.map(async (task) =>
        this.take(fanout.id, await this.runTask(task, directory.byName.get(task.agent)!, models, trace)),
      ),
    )
      .then(() => this.finish(fanout.id, models, supervisor, trace))
      .catch((error: unknown) => console.error(`fan-out ${fanout.id} failed; its deadline timer ends it`, error));
    return ok({ id: fanout.id, work });
  }

  timerHandlers(): TimerHandlers {
    return {
      // A fan-out still executing past its longest task (its instance died): what is missing timed out.
      "fanout.deadline": async (timer) => {
        const fanout = this.store.load(timer.payload.fanout_id);
        if (fanout?.state !== "EXECUTING") return { type: "done" };
        for (const task_id of pendingTasks(fanout.decomposition, fanout.results)) {
          const task = fanout.decomposition.tasks.find((t) => t.task_id === task_id)!;
          await this.take(fanout.id, {
            task_id,
            agent: task.agent,
            success: false,
            error: TASK_TIMEOUT,
            execution_time: task.timeout_s * 1000,
          });
        }
        const session = this.k.store.load();
        if (session) await this.finish(fanout.id, await agentModels(this.k.env, session.tenant), null);
        return { type: "done" };
      },
    };
  }

  /** One task on its agent: a single turn with the instruction, within the task's timeout. */
  private async runTask(
    task: AgentTask,
    agent: AgentDefinition,
    models: AgentModels,
    trace: TraceContext | undefined,
  ): Promise<AgentResult> {
    const started = Date.now();
    const result = await oneTurn({
      agent,
      instruction: task.instruction,
      session_id: this.k.store.load()?.id ?? "",
      run_id: task.task_id,
      timeoutMs: task.timeout_s * 1000,
      provider: models.provider,
      default_model: models.default_model,
      outbound: () => agentOutbound(this.k.env, this.k.store.load()?.tenant ?? "", agent),
      trace,
    });
    if (!result.ok) {
      const error = result.code === "MODEL_TIMEOUT" || result.code === "WEBHOOK_TIMEOUT" ? TASK_TIMEOUT : result.code;
      return { task_id: task.task_id, agent: task.agent, success: false, error, execution_time: Date.now() - started };
    }
    return {
      task_id: task.task_id,
      agent: task.agent,
      success: true,
      data: result.response.content ?? "",
      execution_time: result.duration_ms,
    };
  }

  /** Records a result as it comes (the first per task; late ones after the end are ignored). */
  private async take(id: string, result: AgentResult): Promise<void> {
    const fanout = this.store.load(id);
    const session = this.k.store.load();
    if (fanout?.state !== "EXECUTING" || !session) return;
    const admitted = admitResult(fanout.decomposition, fanout.results, result);
    if (!admitted.ok) return;
    const next = { ...fanout, results: admitted.results };
    const now = this.k.now();
    const details = {
      task_id: result.task_id,
      success: result.success,
      execution_time: result.execution_time,
      ...(result.error ? { error: result.error } : {}),
    };
    await this.commit(session, next, [], { actor: result.agent, actor_type: "agent" }, [
      this.record(session, next, "fanout.task_finished", { actor: result.agent, actor_type: "agent" }, now, details),
    ]);
  }

  /** Every task has a result: aggregate and complete, or fail with what came (the ending rule). */
  private async finish(
    id: string,
    models: AgentModels,
    supervisor: AgentDefinition | null,
    trace?: TraceContext,
  ): Promise<void> {
    const fanout = this.store.load(id);
    const session = this.k.store.load();
    if (fanout?.state !== "EXECUTING" || !session) return;
    const outcome = outcomeOf(fanout.decomposition, fanout.results);
    if (outcome === null) return;
    const now = this.k.now();
    const actor: Actor = { actor: fanout.supervisor, actor_type: "agent" };
    if (outcome === "FAILED") {
      const failed = { ...moveFanout(fanout, "FAILED", now), ended_at: new Date(now).toISOString() };
      await this.commit(
        session,
        failed,
        [],
        actor,
        [this.record(session, failed, "fanout.failed", actor, now, { results: failed.results.length })],
        () => this.k.timers.cancel(`fanout:${id}`),
      );
      return;
    }
    const aggregating = moveFanout(fanout, "AGGREGATING", now);
    const response =
      (supervisor && (await aggregateWithModel(supervisor, aggregating, models, trace))) ??
      aggregate(aggregating.decomposition, aggregating.results);
    const end = this.k.now();
    const done = { ...moveFanout(aggregating, "COMPLETED", end), response, ended_at: new Date(end).toISOString() };
    // In a run the answer is the fan_out call's output; on its own it is the supervisor's message.
    const items: HistoryItem[] =
      fanout.run_id === null
        ? [{ role: "assistant", agent: fanout.supervisor, type: "message", content: response }]
        : [];
    await this.commit(
      session,
      done,
      items,
      actor,
      [this.record(session, done, "fanout.completed", actor, end, { results: done.results.length })],
      () => this.k.timers.cancel(`fanout:${id}`),
    );
  }

  private record(
    session: SessionRecord,
    fanout: Fanout,
    action: string,
    actor: Actor,
    now: number,
    details: Record<string, unknown>,
  ): AuditRecord {
    return auditEvent(
      auditScope(session),
      { action, actor, agent: fanout.supervisor, details: { fanout_id: fanout.id, state: fanout.state, ...details } },
      now,
    );
  }

  private async commit(
    session: SessionRecord,
    fanout: Fanout,
    items: HistoryItem[],
    actor: Actor,
    records: AuditRecord[],
    extra?: () => void,
  ): Promise<void> {
    const now = this.k.now();
    const touched = touch(session, now);
    await this.k.commit(touched, records, () => {
      this.store.save(fanout);
      for (const raw of items) {
        const item = { ...raw, id: `msg_${ulid(now)}`, created_at: new Date(now).toISOString() };
        const seq = this.k.store.appendMessage(item, now);
        this.k.outbox.append([
          messageAdded(auditScope(session), actor, now, item.agent ?? session.current_agent, {
            message_id: item.id,
            seq,
            role: item.role,
            author: item.agent ?? null,
            chars: item.content.length,
          }),
        ]);
      }
      extra?.();
    });
  }
}
