import { agentActor } from "../../../src/audit/record";
import { handoffToolCalled } from "../../../src/audit/run-events";
import { isMcpFunction } from "../../../src/interop/mcp";
import { callHttpTool } from "../../../src/outbound/http-tool";
import { fanOutCallOutput, fanOutCallTasks } from "../../../src/runtime/fan-out-tool";
import { handoffOutput } from "../../../src/runtime/interpret";
import { callsStepMs, HANDOFF_STEP_MS, TOOL_OUTPUTS_TIMEOUT_MS } from "../../../src/runtime/run-deadlines";
import { traceArgs, traceEvent } from "../../../src/runtime/run-record";
import { approvalPending, nextEffect, withCallsDone } from "../../../src/runtime/tool-work";
import type { AgentDefinition } from "../../../src/schemas/agent";
import type { HistoryItem } from "../../../src/schemas/handoff";
import type { PendingCall, TurnWork, WorkCall, WorkHandoff } from "../../../src/schemas/run";
import { agentModels } from "../../../src/services/agent-models";
import { toolOutbound } from "../../../src/services/outbound";
import type { AgentDirectory } from "../../../src/services/registry-cache";
import { TIMER_KEYS } from "../../shared/timer-kinds";
import type { SessionFanout } from "../fanout/session-fanout";
import type { SessionHandoffs } from "../handoffs/session-handoffs";
import { auditScope, type SessionKernel } from "../session-kernel";
import { runMcpCall } from "./run-mcp";
import type { RunPauses } from "./run-pauses";
import { runPeerCall } from "./run-peers";
import type { RunSteps } from "./run-steps";
import type { RunRow } from "./run-store";
import { turnContext } from "./run-trace";

/** A supervisor's fan_out call: the session's fan-out feature runs it to its end. */
export type FanOutRunner = Pick<SessionFanout, "fromRun">;

/**
 * What a model response's tool calls lead to, step by step (src/runtime/tool-work.ts
 * decides the next): asking approvals, waiting for the client's outputs, running Relay's
 * own calls (http tools, other agents, a fan-out), or a handoff through the engine.
 */
export class RunCalls {
  constructor(
    private readonly k: Pick<SessionKernel, "env" | "now" | "store" | "timers">,
    private readonly steps: RunSteps,
    private readonly pauses: RunPauses,
    private readonly handoffs: SessionHandoffs,
    private readonly fanout: FanOutRunner,
  ) {}

  private get store() {
    return this.steps.store;
  }

  /** The next step of a response's tool calls; false when the run paused or ended. */
  async carryOut(row: RunRow, work: TurnWork, agent: AgentDefinition, directory: AgentDirectory): Promise<boolean> {
    const effect = nextEffect(work);
    switch (effect.type) {
      case "ask_approval":
        await this.pauses.askApproval(row, work, effect.calls, agent);
        return false;
      case "await_approval":
        // Approvals were asked but the run is running (a restart between the two): pause it again.
        await this.pauses.pause(
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
        await this.pauses.pause(
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
          await this.steps.commitStep(session, { ...row, step: "turn", work: null }, { now: this.k.now() });
          await this.pauses.awaitHuman(
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
        await this.steps.commitStep(this.k.store.load()!, { ...row, step: "turn", work: null }, { now: this.k.now() });
        return true;
    }
  }

  /**
   * Runs the calls Relay runs (http tools, messages to other agents), side by side, each within its
   * own deadline; their outputs go in.
   */
  private async runCalls(
    row: RunRow,
    work: TurnWork,
    calls: WorkCall[],
    agent: AgentDefinition,
    directory: AgentDirectory,
  ): Promise<void> {
    const tenant = this.k.store.load()?.tenant ?? "";
    // The watchdog past the longest call: a restart meanwhile resumes the run after it, not later.
    await this.steps.record(
      row,
      this.k.now(),
      callsStepMs(calls, { tools: directory.tools, agents: directory.byName }),
    );
    // A call's trace event is made when it ends, so the calls carry the turn's span (docs/observability.md).
    const trace = turnContext(this.store, row);
    const models = calls.some((c) => c.kind !== "http" && c.kind !== "mcp")
      ? await agentModels(this.k.env, tenant)
      : null;
    const results = await Promise.all(
      calls.map(async (call) => {
        if (call.kind === "fan_out") return { call, ...(await this.fanOutCall(row.run.id, work.agent, call)) };
        if (call.kind === "mcp") {
          const tool = directory.tools.get(call.name);
          if (!isMcpFunction(tool))
            return {
              call,
              ok: false,
              output: `Error: the tool '${call.name}' is no longer offered; it was not run.`,
              duration_ms: 0,
            };
          return { call, ...(await runMcpCall(this.k.env, tenant, row.run.session_id, tool, call, trace)) };
        }
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
                trace,
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
          { outbound: { ...(await toolOutbound(this.k.env, tenant, tool)), trace } },
        );
        return { call, ...result };
      }),
    );
    const session = this.steps.continuing(row.run.id);
    if (!session) return;
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
      { items, events, now },
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
    const result = await this.fanout.fromRun(runId, decomposition, agentActor(agent));
    return { ...fanOutCallOutput(result), duration_ms: Date.now() - started };
  }

  /** The work's transfer or return: through the handoff engine, then the call's output. */
  private async handoff(row: RunRow, work: TurnWork, call: WorkHandoff, agent: AgentDefinition): Promise<boolean> {
    const actor = agentActor(agent.name);
    let session = this.k.store.load()!;
    await this.steps.commitStep(session, { ...row, step: "handoff" }, { now: this.k.now(), stepMs: HANDOFF_STEP_MS });
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
        requested_by: { run_id: row.run.id, tool_name: call.name },
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
    // An accepted call is on the handoff's own initiated record (run and tool); a refused one has this.
    const audit = started.ok
      ? null
      : handoffToolCalled(auditScope(session), actor, now, {
          run_id: row.run.id,
          agent: agent.name,
          tool_name: call.name,
          target,
          accepted: false,
          error_code: started.error.code,
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
    await this.steps.commitStep(session, next, { items: [output], events, records: audit ? [audit] : [], now });
    return true;
  }
}

const pendingCall = (c: PendingCall): PendingCall => ({ id: c.id, name: c.name, arguments: c.arguments });
