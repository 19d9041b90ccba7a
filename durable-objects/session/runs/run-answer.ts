import { agentActor, SYSTEM_ACTOR } from "../../../src/audit/record";
import { checkOutput, repairMessages } from "../../../src/runtime/guardrail";
import { liveRetracted } from "../../../src/runtime/live-events";
import { turnStepMs } from "../../../src/runtime/run-deadlines";
import { callDetails, executorOf, traceEvent } from "../../../src/runtime/run-record";
import type { TurnPlan } from "../../../src/runtime/turn";
import type { AgentDefinition } from "../../../src/schemas/agent";
import type { HistoryItem } from "../../../src/schemas/handoff";
import type { TraceEvent } from "../../../src/schemas/run";
import type { AgentModels } from "../../../src/services/agent-models";
import type { SessionHandoffs } from "../handoffs/session-handoffs";
import type { SessionKernel } from "../session-kernel";
import { executeTurn } from "./run-executor";
import type { RunSteps } from "./run-steps";
import type { RunRow } from "./run-store";
import type { RunStreams } from "./run-streams";
import { turnContext } from "./run-trace";

/**
 * A run's final answer: through the agent's output guardrail (reject, one repair, or warn),
 * then the run completes (or fails with GUARDRAIL_FAILED); after it, an `after_turn:
 * return_to_root` session hands back hop by hop to the agent it started with.
 */
export class RunAnswer {
  constructor(
    private readonly k: Pick<SessionKernel, "commit" | "env" | "liveEvents" | "now" | "store">,
    private readonly steps: RunSteps,
    private readonly handoffs: SessionHandoffs,
    private readonly streams: RunStreams,
  ) {}

  /**
   * The streamed answer `message_id` is withdrawn (a guardrail refused it): a stored
   * `message.retracted` event, published at once so clients drop it before anything follows.
   */
  private async retract(run: RunRow["run"], messageId: string | undefined, agent: string): Promise<void> {
    const session = this.k.store.load();
    if (!session || messageId === undefined) return;
    const event = liveRetracted(session.id, run.id, this.k.now(), {
      message_id: messageId,
      agent,
      code: "GUARDRAIL_FAILED",
    });
    await this.k.commit(session, [], () => {
      this.k.liveEvents.append([event]);
      this.streams.forget();
    });
  }

  /**
   * A final answer: through the agent's output guardrail (reject, one repair, or warn), then
   * the run completes (or fails with GUARDRAIL_FAILED).
   */
  async complete(
    row: RunRow,
    agent: AgentDefinition,
    output: string,
    assistant: HistoryItem,
    events: TraceEvent[],
    turn: { plan: TurnPlan; models: AgentModels },
  ): Promise<boolean> {
    if (!this.steps.continuing(row.run.id)) return false;
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
    // What was streamed of an answer the guardrail refuses is withdrawn (a warning keeps it).
    if (!check.ok && guard?.on_failure !== "warn") await this.retract(row.run, assistant.id, agent.name);
    if (!check.ok && guard?.on_failure === "repair") {
      events.push(guardEvent("repair requested", check.errors));
      current = await this.steps.record(
        { ...row, run: { ...row.run, turns: row.run.turns + 1 } },
        this.k.now(),
        turnStepMs(agent),
      );
      const request = {
        ...turn.plan.request,
        messages: [...turn.plan.request.messages, ...repairMessages(output, check.errors)],
      };
      const session = this.k.store.load();
      const writing =
        agent.kind === "webhook" || !session ? null : this.streams.begin(session.id, row.run.id, agent.name);
      const repaired = await executeTurn(this.k.env, {
        agent,
        request,
        models: turn.models,
        turn: current.run.turns,
        tenant: session?.tenant ?? "",
        writing,
        trace: turnContext(this.steps.store, current),
      });
      this.streams.end(row.run.id);
      if (repaired.ok) {
        events.push(
          traceEvent(
            current.run,
            "llm_call",
            agent.name,
            this.k.now(),
            callDetails(executorOf(agent), repaired.model, repaired, { outcome: "repair" }),
            repaired.duration_ms,
          ),
        );
        const text = repaired.response.tool_calls.length === 0 ? (repaired.response.content ?? "") : "";
        answer = {
          output: text,
          assistant: {
            role: "assistant",
            agent: agent.name,
            type: "message",
            content: text,
            ...(writing ? { id: writing.message_id } : {}),
          },
        };
        check =
          repaired.response.tool_calls.length === 0
            ? checkOutput(agent, text)
            : { ok: false, errors: ["the repair called tools instead of answering"] };
        if (check.ok) events.push(guardEvent("repaired"));
        else await this.retract(current.run, writing?.message_id, agent.name);
      } else {
        check = { ok: false, errors: [`the repair call failed (${repaired.code}): ${repaired.message}`] };
        if (writing && writing.text() !== "") await this.retract(current.run, writing.message_id, agent.name);
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
        { actor, agent: agent.name, events, items: [answer.assistant], base: current },
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
      await this.steps.finish(
        row.run.id,
        "failed",
        { error },
        { actor, agent: agent.name, events, items: [], base: current },
      );
      return false;
    }
    events.push(traceEvent(current.run, "agent_complete", agent.name, this.k.now(), { outcome: "final answer" }));
    await this.steps.finish(
      row.run.id,
      "completed",
      { output: answer.output, output_agent: agent.name },
      { actor, agent: agent.name, events, items: [answer.assistant], base: current },
    );
    await this.afterTurn();
    return false;
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
