import { type Actor, type AuditRecord, agentActor, SYSTEM_ACTOR } from "../../../src/audit/record";
import { handoffToolCalled, inboxItemCreated } from "../../../src/audit/run-events";
import { type ErrorBody, err, type Result } from "../../../src/errors";
import type { AgentTurnRequest } from "../../../src/runtime/agent-turn";
import { fanOutCallOutput, fanOutCallTasks } from "../../../src/runtime/fan-out-tool";
import { checkOutput, repairMessages } from "../../../src/runtime/guardrail";
import { callHttpTool } from "../../../src/runtime/http-tool";
import { openItem } from "../../../src/runtime/inbox";
import { handoffOutput, interpretTurn } from "../../../src/runtime/interpret";
import { liveApproval } from "../../../src/runtime/live-events";
import { traceArgs, traceEvent } from "../../../src/runtime/run-record";
import {
  approvalPending,
  approvalPrompt,
  nextEffect,
  planWork,
  withApprovalsAsked,
  withCallsDone,
} from "../../../src/runtime/tool-work";
import { callModel, planTurn, type TurnPlan, turnTimeoutMs } from "../../../src/runtime/turn";
import { callWebhookAgent } from "../../../src/runtime/webhook-agent";
import type { AgentDefinition } from "../../../src/schemas/agent";
import type { Fanout, TaskDecomposition } from "../../../src/schemas/collaboration";
import type { HistoryItem } from "../../../src/schemas/handoff";
import type { PendingCall, Run, TraceEvent, TurnWork, WorkCall, WorkHandoff } from "../../../src/schemas/run";
import { type AgentModels, agentModels } from "../../../src/services/agent-models";
import { agentOutbound, toolOutbound } from "../../../src/services/outbound";
import { type AgentDirectory, agentDirectory } from "../../../src/services/registry-cache";
import type { SessionRecord } from "../../../src/sessions/model";
import { TIMER_KEYS } from "../../shared/timer-kinds";
import type { SessionHandoffs } from "../handoffs/session-handoffs";
import { auditScope, type SessionKernel } from "../session-kernel";
import { runPeerCall } from "./run-peers";
import type { RunSteps } from "./run-steps";
import type { RunRow } from "./run-store";

/** How long a request waits for its run before answering with the run still running (202). */
export const RUN_WAIT_MS = 25_000;
/** Escalations wait this long for a person before the agent is told nobody answered. */
export const ESCALATION_TIMEOUT_MS = 24 * 3_600_000;
/** How long a run in requires_action waits for the client's tool outputs (OpenAI's runs wait 10 minutes too). */
export const TOOL_OUTPUTS_TIMEOUT_MS = 10 * 60_000;

/** A supervisor's fan_out call: the session's fan-out feature runs it to its end. */
export type FanOutRunner = (runId: string, decomposition: TaskDecomposition, actor: Actor) => Promise<Result<Fanout>>;

/**
 * The loop that drives a run (design §4a): the current agent's turn, repeated while it
 * calls tools and continued by the target after a handoff, until a final answer, a pause
 * (a person, an approval, the client's tool outputs), or max_turns. What each response
 * means and what its calls need next is decided in src/runtime; this takes the external
 * calls (model, webhook, http tools, other agents, the handoff engine) between the
 * recorded steps (run-steps.ts).
 */
export class RunLoop {
  /** Runs whose loop runs in this instance; an active run not in here was left by a restart. */
  private readonly driving = new Map<string, Promise<void>>();

  constructor(
    private readonly k: SessionKernel,
    private readonly steps: RunSteps,
    private readonly handoffs: SessionHandoffs,
    private readonly fanOut: FanOutRunner = async () => err("INTERNAL", "fan-out is not wired"),
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
            SYSTEM_ACTOR,
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
      const agent = directory.byName.get(session.current_agent);
      if (!agent?.enabled) {
        const error: ErrorBody = agent
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
        await this.steps.finish(runId, "failed", { error }, SYSTEM_ACTOR, session.current_agent);
        return;
      }
      if (row.work) {
        if (!(await this.carryOut(row, row.work, agent, directory))) return;
        continue;
      }
      if (agent.kind === "human") {
        await this.awaitHuman(row, session, agent, null, `'${agent.name}' answers from the inbox.`);
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

  /** Sends one turn to whoever executes the agent: its webhook, or the model provider. */
  private async execute(agent: AgentDefinition, request: AgentTurnRequest, models: AgentModels) {
    const timeout = turnTimeoutMs(agent);
    if (agent.kind === "webhook") {
      return callWebhookAgent({ name: agent.name, endpoint: agent.endpoint! }, request, {
        outbound: await agentOutbound(this.k.env, this.k.store.load()?.tenant ?? "", agent),
        timeoutMs: timeout,
      });
    }
    if (!models.provider.ok)
      return {
        ok: false as const,
        code: "DEPENDENCY_UNAVAILABLE" as const,
        message: models.provider.error.message,
        duration_ms: 0,
      };
    return callModel(models.provider.value, request, timeout);
  }

  /** One turn of a model or webhook agent; false when the run ended or paused. */
  private async turn(
    row: RunRow,
    session: SessionRecord,
    agent: AgentDefinition,
    directory: AgentDirectory,
  ): Promise<boolean> {
    const now = this.k.now();
    const models = await agentModels(this.k.env, session.tenant);
    const plan = planTurn({
      run_id: row.run.id,
      agent,
      directory: directory.byName,
      registry_tools: directory.tools,
      session,
      history: this.k.store.history(),
      default_model: models.default_model,
    });
    const started = await this.steps.record(
      { ...row, run: { ...row.run, agent: agent.name, turns: row.run.turns + 1 }, step: "turn" },
      now,
    );
    const result = await this.execute(agent, plan.request, models);
    const after = this.k.now();
    const executor = agent.kind === "webhook" ? "webhook" : "model";
    if (!result.ok) {
      const event = traceEvent(
        started.run,
        "agent_error",
        agent.name,
        after,
        { executor, model: plan.request.model },
        result.duration_ms,
        result.code,
      );
      await this.steps.finish(
        row.run.id,
        "failed",
        { error: { code: result.code, message: result.message } },
        undefined,
        agent.name,
        [event],
      );
      return false;
    }
    const decision = interpretTurn(agent.name, result.response, plan.tools);
    const usage = result.response.usage;
    // Registry tool calls get their trace event when they run (or are decided); the rest now.
    const runLater = new Set(decision.calls.map((c) => c.call.id));
    const events: TraceEvent[] = [
      traceEvent(
        started.run,
        "llm_call",
        agent.name,
        after,
        {
          executor,
          model: result.model,
          ...(usage
            ? {
                tokens: { prompt: usage.prompt_tokens, completion: usage.completion_tokens, total: usage.total_tokens },
              }
            : {}),
        },
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
    if (decision.action.type === "final")
      return this.complete(started, agent, decision.action.output, decision.assistant, events, { plan, models });
    // The session may have ended while the agent was thinking: its answer goes nowhere.
    const current = this.k.store.load();
    if (current?.status !== "active" || this.store.get(row.run.id)?.run.status !== "running") return false;
    const work = planWork(agent, decision);
    await this.steps.commitStep(
      current,
      { ...started, step: work ? "tools" : "turn", work },
      [decision.assistant, ...decision.outputs],
      events,
      [],
      agentActor(agent.name),
      this.k.now(),
    );
    return true;
  }

  /**
   * A final answer: through the agent's output guardrail (reject, one repair, or warn), then
   * the run completes (or fails with GUARDRAIL_FAILED).
   */
  private async complete(
    row: RunRow,
    agent: AgentDefinition,
    output: string,
    assistant: HistoryItem,
    events: TraceEvent[],
    turn: { plan: TurnPlan; models: AgentModels },
  ): Promise<boolean> {
    const session = this.k.store.load();
    if (session?.status !== "active" || this.store.get(row.run.id)?.run.status !== "running") return false;
    const actor = agentActor(agent.name);
    const guard = agent.guardrails;
    let check = checkOutput(agent, output);
    let answer = { output, assistant };
    let current = row;
    const guardEvent = (outcome: string, errors?: string[]) =>
      traceEvent(
        current.run,
        "guardrail",
        agent.name,
        this.k.now(),
        { outcome, ...(errors ? { tool_args: { errors } } : {}) },
        0,
        errors ? "GUARDRAIL_FAILED" : null,
      );
    if (guard?.output_schema && check.ok) events.push(guardEvent("passed"));
    if (!check.ok && guard?.on_failure === "repair") {
      events.push(guardEvent("repair requested", check.errors));
      current = await this.steps.record({ ...row, run: { ...row.run, turns: row.run.turns + 1 } }, this.k.now());
      const request = {
        ...turn.plan.request,
        messages: [...turn.plan.request.messages, ...repairMessages(output, check.errors)],
      };
      const repaired = await this.execute(agent, request, turn.models);
      if (repaired.ok) {
        events.push(
          traceEvent(
            current.run,
            "llm_call",
            agent.name,
            this.k.now(),
            { executor: agent.kind === "webhook" ? "webhook" : "model", model: repaired.model, outcome: "repair" },
            repaired.duration_ms,
          ),
        );
        const text = repaired.response.tool_calls.length === 0 ? (repaired.response.content ?? "") : "";
        answer = { output: text, assistant: { role: "assistant", agent: agent.name, type: "message", content: text } };
        check =
          repaired.response.tool_calls.length === 0
            ? checkOutput(agent, text)
            : { ok: false, errors: ["the repair called tools instead of answering"] };
        if (check.ok) events.push(guardEvent("repaired"));
      } else {
        check = { ok: false, errors: [`the repair call failed (${repaired.code}): ${repaired.message}`] };
      }
    }
    if (!check.ok && guard?.on_failure === "warn") {
      events.push(guardEvent("warned", check.errors));
      events.push(
        traceEvent(current.run, "agent_complete", agent.name, this.k.now(), {
          outcome: "final answer (guardrail warning)",
        }),
      );
      const warning = {
        code: "GUARDRAIL_FAILED",
        message: "The output does not match the agent's output_schema.",
        details: { errors: check.errors },
      };
      await this.steps.finish(
        row.run.id,
        "completed",
        { output: answer.output, output_agent: agent.name, warnings: [warning] },
        actor,
        agent.name,
        events,
        [answer.assistant],
        current,
      );
      await this.afterTurn();
      return false;
    }
    if (!check.ok) {
      events.push(guardEvent(guard?.on_failure === "repair" ? "rejected after repair" : "rejected", check.errors));
      const error = {
        code: "GUARDRAIL_FAILED" as const,
        message: "The agent's output does not match its output_schema.",
        details: { errors: check.errors },
      };
      await this.steps.finish(row.run.id, "failed", { error }, actor, agent.name, events, [], current);
      return false;
    }
    events.push(traceEvent(current.run, "agent_complete", agent.name, this.k.now(), { outcome: "final answer" }));
    await this.steps.finish(
      row.run.id,
      "completed",
      { output: answer.output, output_agent: agent.name },
      actor,
      agent.name,
      events,
      [answer.assistant],
      current,
    );
    await this.afterTurn();
    return false;
  }

  /** The next step of a response's tool calls; false when the run paused or ended. */
  private async carryOut(
    row: RunRow,
    work: TurnWork,
    agent: AgentDefinition,
    directory: AgentDirectory,
  ): Promise<boolean> {
    const effect = nextEffect(work);
    switch (effect.type) {
      case "ask_approval":
        await this.askApproval(row, work, effect.calls, agent);
        return false;
      case "await_approval":
        // Approvals were asked but the run is running (a restart between the two): pause it again.
        await this.pause(
          row,
          work,
          "awaiting_approval",
          approvalPending(work, new Date(this.k.now() + agent.tools.confirmation.timeout_s * 1000).toISOString()),
        );
        return false;
      case "run_calls":
        await this.runCalls(row, work, effect.calls, agent, directory);
        return true;
      case "await_client": {
        const expires = new Date(this.k.now() + TOOL_OUTPUTS_TIMEOUT_MS).toISOString();
        await this.pause(
          row,
          work,
          "requires_action",
          { kind: "client_tools", agent: work.agent, tool_calls: effect.calls.map(pendingCall), expires_at: expires },
          () =>
            this.k.timers.schedule(
              "run.outputs_expire",
              Date.parse(expires),
              { run_id: row.run.id },
              { key: TIMER_KEYS.toolOutputs },
            ),
        );
        return false;
      }
      case "handoff":
        if (effect.handoff.type === "escalate") {
          const session = this.k.store.load()!;
          await this.steps.commitStep(
            session,
            { ...row, step: "turn", work: null },
            [],
            [],
            [],
            agentActor(agent.name),
            this.k.now(),
          );
          await this.awaitHuman(
            this.store.get(row.run.id)!,
            this.k.store.load()!,
            agent,
            effect.handoff.id,
            effect.handoff.reason,
          );
          return false;
        }
        return this.handoff(row, work, effect.handoff, agent);
      case "done":
        await this.steps.commitStep(
          this.k.store.load()!,
          { ...row, step: "turn", work: null },
          [],
          [],
          [],
          agentActor(agent.name),
          this.k.now(),
        );
        return true;
    }
  }

  /** Pauses the run (approvals, client tools) with what it waits for. */
  private async pause(
    row: RunRow,
    work: TurnWork,
    to: "awaiting_approval" | "requires_action",
    pending: NonNullable<Run["pending"]>,
    extra?: () => void,
    records: AuditRecord[] = [],
    before?: () => void,
  ): Promise<void> {
    const session = this.k.store.load()!;
    const now = this.k.now();
    const next = this.steps.moved(row, to, { pending }, auditScope(session), agentActor(work.agent), now, records);
    await this.k.commit(session, records, () => {
      before?.();
      this.store.save({ ...next, work, step: null });
      this.k.timers.cancel(TIMER_KEYS.runResume);
      extra?.();
    });
  }

  /** Opens an inbox item per call that needs approval, and pauses the run in awaiting_approval. */
  private async askApproval(row: RunRow, work: TurnWork, calls: PendingCall[], agent: AgentDefinition): Promise<void> {
    const session = this.k.store.load()!;
    const now = this.k.now();
    const expires = now + agent.tools.confirmation.timeout_s * 1000;
    const scope = auditScope(session);
    const actor = agentActor(agent.name);
    const items = calls.map((call) =>
      openItem({
        kind: "approval",
        session_id: session.id,
        agent: agent.name,
        run_id: row.run.id,
        reason: approvalPrompt(agent, call),
        details: { tool_call_id: call.id, tool_name: call.name, arguments: traceArgs(call.arguments) },
        now,
        expires_at: expires,
      }),
    );
    const asked = withApprovalsAsked(work, new Map(items.map((item, i) => [calls[i]!.id, item.id])));
    const records: AuditRecord[] = items.map((item) =>
      inboxItemCreated(scope, actor, now, {
        inbox_id: item.id,
        kind: "approval",
        agent: agent.name,
        run_id: row.run.id,
        handoff_id: null,
        reason: item.reason,
        expires_at: item.expires_at,
      }),
    );
    const events = calls.map((call) =>
      traceEvent(row.run, "tool_call", agent.name, now, {
        tool_name: call.name,
        tool_args: traceArgs(call.arguments),
        outcome: "approval required",
      }),
    );
    await this.pause(
      row,
      asked,
      "awaiting_approval",
      approvalPending(asked, new Date(expires).toISOString()),
      undefined,
      records,
      () => {
        for (const [i, item] of items.entries()) {
          this.k.inbox.save(item);
          this.k.timers.schedule("inbox.expire", expires, { inbox_id: item.id }, { key: TIMER_KEYS.inbox(item.id) });
          const call = calls[i]!;
          this.k.liveEvents.append([
            liveApproval(session.id, row.run.id, now, {
              inbox_id: item.id,
              tool_name: call.name,
              arguments: traceArgs(call.arguments),
              prompt: item.reason,
              expires_at: item.expires_at,
            }),
          ]);
        }
        this.store.addEvents(events);
      },
    );
  }

  /** Runs the calls Relay runs (http tools, messages to other agents), side by side, each within its own deadline; their outputs go in. */
  private async runCalls(
    row: RunRow,
    work: TurnWork,
    calls: WorkCall[],
    agent: AgentDefinition,
    directory: AgentDirectory,
  ): Promise<void> {
    const tenant = this.k.store.load()?.tenant ?? "";
    const models = calls.some((c) => c.kind !== "http") ? await agentModels(this.k.env, tenant) : null;
    const results = await Promise.all(
      calls.map(async (call) => {
        if (call.kind === "fan_out") return { call, ...(await this.fanOutCall(row.run.id, work.agent, call)) };
        if (call.kind !== "http") {
          return {
            call,
            ...(await runPeerCall(
              {
                env: this.k.env,
                tenant,
                session_id: row.run.session_id,
                agent,
                directory: directory.byName,
                models: models!,
              },
              call,
            )),
          };
        }
        const tool = directory.tools.get(call.name);
        if (tool?.kind !== "http")
          return {
            call,
            ok: false,
            output: `Error: the tool '${call.name}' is no longer in the registry; it was not run.`,
            duration_ms: 0,
          };
        const result = await callHttpTool(
          tool,
          { session_id: row.run.session_id, run_id: row.run.id, agent: work.agent, call },
          { outbound: await toolOutbound(this.k.env, tenant, tool) },
        );
        return { call, ...result };
      }),
    );
    const session = this.k.store.load();
    if (session?.status !== "active" || this.store.get(row.run.id)?.run.status !== "running") return;
    const now = this.k.now();
    const items: HistoryItem[] = results.map((r) => ({
      role: "tool",
      agent: work.agent,
      type: "tool_output",
      tool_name: r.call.name,
      tool_call_id: r.call.id,
      content: r.output,
    }));
    const events = results.map((r) =>
      traceEvent(
        row.run,
        "tool_call",
        work.agent,
        now,
        { tool_name: r.call.name, tool_args: traceArgs(r.call.arguments), outcome: r.ok ? "ok" : "error" },
        r.duration_ms,
        r.ok ? null : r.output.slice(0, 300),
      ),
    );
    const fresh = this.store.get(row.run.id)!;
    await this.steps.commitStep(
      session,
      { ...fresh, work: withCallsDone(work, new Set(calls.map((c) => c.id))), step: "tools" },
      items,
      events,
      [],
      agentActor(work.agent),
      now,
    );
  }

  /** A fan_out call: its tasks run to the end of the fan-out; the aggregate (or what failed) is the output. */
  private async fanOutCall(
    runId: string,
    agent: string,
    call: WorkCall,
  ): Promise<{ ok: boolean; output: string; duration_ms: number }> {
    const started = Date.now();
    const decomposition = fanOutCallTasks(call.arguments);
    if (!decomposition) return { ok: false, output: "Error: the tasks are not a valid decomposition.", duration_ms: 0 };
    const result = await this.fanOut(runId, decomposition, agentActor(agent));
    return { ...fanOutCallOutput(result), duration_ms: Date.now() - started };
  }

  /** The work's transfer or return: through the handoff engine, then the call's output. */
  private async handoff(row: RunRow, work: TurnWork, call: WorkHandoff, agent: AgentDefinition): Promise<boolean> {
    const actor = agentActor(agent.name);
    let session = this.k.store.load()!;
    await this.steps.commitStep(session, { ...row, step: "handoff" }, [], [], [], actor, this.k.now());
    const target = call.target;
    const started = await this.handoffs.start(
      {
        request: {
          session_id: session.id,
          source_agent: agent.name,
          ...(call.type === "transfer" && target ? { target_agent: target } : {}),
          mode: call.type === "transfer" ? "transfer" : "return",
          policy: "immediate",
          reason: call.reason,
          ...(call.input === undefined ? {} : { payload: { input: call.input } }),
          timeout_s: 300,
          on_timeout: "fail",
        },
        hidden_calls: work.hidden_calls,
      },
      actor,
    );
    const now = this.k.now();
    session = this.k.store.load()!;
    const fresh = this.store.get(row.run.id)!;
    const outcome = started.ok
      ? ({ ok: true, target: target ?? session.current_agent } as const)
      : {
          ok: false as const,
          code: started.error.code,
          message: started.error.message,
          allowed:
            (started.error.details as { allowed?: string[] } | undefined)?.allowed ?? agent.handoffs.map((h) => h.to),
        };
    const output = handoffOutput(agent.name, call, outcome);
    const event = traceEvent(
      fresh.run,
      "handoff",
      agent.name,
      now,
      {
        from_agent: agent.name,
        ...(target ? { to_agent: target } : {}),
        handoff_reason: call.reason,
        tool_name: call.name,
        outcome: started.ok ? "completed" : started.error.code,
      },
      0,
      started.ok ? null : started.error.code,
    );
    const audit = handoffToolCalled(auditScope(session), actor, now, {
      run_id: row.run.id,
      agent: agent.name,
      tool_name: call.name,
      target,
      accepted: started.ok,
      ...(started.ok ? {} : { error_code: started.error.code }),
    });
    const next: RunRow = {
      ...fresh,
      step: "turn",
      work: null,
      run: {
        ...fresh.run,
        agent: session.current_agent,
        handoffs: started.ok ? [...fresh.run.handoffs, started.value.handoff.id] : fresh.run.handoffs,
      },
    };
    const events = started.ok
      ? [
          event,
          traceEvent(next.run, "agent_start", session.current_agent, now, {
            from_agent: agent.name,
            outcome: "handed the conversation",
          }),
        ]
      : [event];
    await this.steps.commitStep(session, next, [output], events, [audit], actor, now);
    return true;
  }

  /** The run waits for a person: an inbox item that expires after the agent's timeout (or the escalation timeout). */
  private async awaitHuman(
    row: RunRow,
    session: SessionRecord,
    agent: AgentDefinition,
    callId: string | null,
    reason: string,
  ): Promise<void> {
    const now = this.k.now();
    const expires = now + (callId === null ? turnTimeoutMs(agent) : ESCALATION_TIMEOUT_MS);
    const item = openItem({
      kind: callId === null ? "human_turn" : "escalation",
      session_id: session.id,
      agent: agent.name,
      run_id: row.run.id,
      reason,
      details: callId === null ? {} : { tool_call_id: callId },
      now,
      expires_at: expires,
    });
    const scope = auditScope(session);
    const actor: Actor = callId === null ? SYSTEM_ACTOR : agentActor(agent.name);
    const records: AuditRecord[] = [
      inboxItemCreated(scope, actor, now, {
        inbox_id: item.id,
        kind: item.kind,
        agent: agent.name,
        run_id: row.run.id,
        handoff_id: null,
        reason,
        expires_at: item.expires_at,
      }),
    ];
    const pending = {
      kind: "human" as const,
      inbox_id: item.id,
      agent: agent.name,
      tool_call_id: callId,
      expires_at: item.expires_at!,
    };
    const next = this.steps.moved(
      { ...row, run: { ...row.run, agent: agent.name } },
      "awaiting_human",
      { pending },
      scope,
      actor,
      now,
      records,
    );
    await this.k.commit(session, records, () => {
      this.k.inbox.save(item);
      this.store.save({ ...next, step: null, work: null });
      this.store.addEvents([
        traceEvent(next.run, "agent_start", agent.name, now, { executor: "human", outcome: "waiting for a person" }),
      ]);
      this.k.timers.schedule("inbox.expire", expires, { inbox_id: item.id }, { key: TIMER_KEYS.inbox(item.id) });
      this.k.timers.cancel(TIMER_KEYS.runResume);
    });
  }

  /** after_turn: return_to_root — once a run completes, the session returns hop by hop to the agent it started with. */
  private async afterTurn(): Promise<void> {
    for (let hop = 0; hop < 50; hop++) {
      const session = this.k.store.load();
      if (session?.metadata.after_turn !== "return_to_root" || session.handoff_stack.length < 2) return;
      const back = await this.handoffs.start(
        {
          request: {
            session_id: session.id,
            source_agent: session.current_agent,
            mode: "return",
            policy: "immediate",
            reason: "after_turn: return_to_root",
            timeout_s: 300,
            on_timeout: "fail",
          },
        },
        SYSTEM_ACTOR,
      );
      if (!back.ok) {
        console.error(`session ${session.id}: return to the root failed`, back.error);
        return;
      }
    }
  }
}

const pendingCall = (c: PendingCall): PendingCall => ({ id: c.id, name: c.name, arguments: c.arguments });
