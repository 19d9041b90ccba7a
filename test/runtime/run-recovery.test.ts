import { describe, expect, it } from "vitest";
import { interruptedStep, interruptedTrace } from "../../src/runtime/run-recovery";
import type { HistoryItem } from "../../src/schemas/handoff";
import type { TurnWork, WorkCall } from "../../src/schemas/run";

const INTERRUPTED = "Error: interrupted by a restart; call it again if it is still needed.";

const call = (id: string, kind: WorkCall["kind"], over: Partial<WorkCall> = {}): WorkCall => ({
  id,
  name: `tool_${id}`,
  arguments: "{}",
  kind,
  approval: "none",
  inbox_id: null,
  done: false,
  ...over,
});
const work = (calls: WorkCall[], handoff: TurnWork["handoff"] = null): TurnWork => ({
  agent: "desk",
  calls,
  handoff,
  hidden_calls: [],
});
const transfer = (target: string): NonNullable<TurnWork["handoff"]> => ({
  id: "h1",
  name: `transfer_to_${target}`,
  arguments: "{}",
  type: "transfer",
  target,
  reason: "r",
  approval: "none",
  inbox_id: null,
});

describe("what a restart leaves of a run's step", () => {
  it("in the tools step, answers every call Relay makes as interrupted — MCP, other agents, a fan-out — never the client's", () => {
    const kinds: WorkCall["kind"][] = ["mcp", "ask", "notify", "broadcast", "fan_out", "http", "client"];
    const w = work(kinds.map((kind) => call(kind, kind)));
    const {
      answers,
      work: next,
      interrupted,
    } = interruptedStep({
      work: w,
      step: "tools",
      current_agent: "desk",
      history: () => [],
    });
    const relayRun = kinds.filter((k) => k !== "client");
    expect(answers.map((a) => [a.tool_call_id, a.content])).toEqual(relayRun.map((k) => [k, INTERRUPTED]));
    expect(interrupted.map((i) => [i.agent, i.call.id])).toEqual(relayRun.map((k) => ["desk", k]));
    expect(next!.calls.filter((c) => !c.done).map((c) => c.id)).toEqual(["client"]);
  });

  it("puts each interrupted call on the trace as interrupted, not ok", () => {
    const [event] = interruptedTrace(
      { id: "run_1", session_id: "ses_1" },
      [{ agent: "desk", call: call("m", "mcp") }],
      0,
    );
    expect(event).toMatchObject({
      event_type: "tool_call",
      agent_name: "desk",
      correlation_id: "run_1",
      details: { tool_name: "tool_m", tool_args: {}, outcome: "interrupted" },
      error: "interrupted by a restart; not made again",
    });
  });

  it("in the tools step, answers the http calls that may have run as interrupted (never repeats them) and marks them done", () => {
    const w = work([
      call("a", "http"),
      call("b", "http", { approval: "approved" }),
      call("c", "http", { approval: "pending", inbox_id: "inb_1" }),
      call("d", "http", { approval: "denied", done: true }),
      call("e", "http", { done: true }),
      call("f", "client"),
    ]);
    const unread = () => {
      throw new Error("the history is read only for a run that kept no work");
    };
    const { answers, work: next } = interruptedStep({ work: w, step: "tools", current_agent: "desk", history: unread });
    expect(answers).toEqual([
      {
        role: "tool",
        agent: "desk",
        type: "tool_output",
        tool_name: "tool_a",
        tool_call_id: "a",
        content: INTERRUPTED,
      },
      {
        role: "tool",
        agent: "desk",
        type: "tool_output",
        tool_name: "tool_b",
        tool_call_id: "b",
        content: INTERRUPTED,
      },
    ]);
    expect(next!.calls.map((c) => [c.id, c.done])).toEqual([
      ["a", true],
      ["b", true],
      ["c", false],
      ["d", true],
      ["e", true],
      ["f", false],
    ]);
  });

  it("outside the tools step, answers nothing and keeps the work as it was", () => {
    const w = work([call("a", "http")], transfer("billing"));
    expect(interruptedStep({ work: w, step: "turn", current_agent: "desk", history: () => [] })).toEqual({
      answers: [],
      work: w,
      interrupted: [],
    });
    expect(interruptedStep({ work: w, step: null, current_agent: "desk", history: () => [] })).toEqual({
      answers: [],
      work: w,
      interrupted: [],
    });
  });

  it("in the handoff step, answers the call by where the session is now: handed over, or interrupted", () => {
    const w = work([], transfer("billing"));
    const over = interruptedStep({ work: w, step: "handoff", current_agent: "billing", history: () => [] });
    expect(over.answers).toEqual([
      {
        role: "tool",
        agent: "desk",
        type: "tool_output",
        tool_name: "transfer_to_billing",
        tool_call_id: "h1",
        content: JSON.stringify({ assistant: "billing" }),
      },
    ]);
    expect(over.work!.handoff).toBeNull();
    const stayed = interruptedStep({ work: w, step: "handoff", current_agent: "desk", history: () => [] });
    expect(stayed.answers.map((a) => a.content)).toEqual([INTERRUPTED]);
    expect(stayed.work!.handoff).toBeNull();
  });

  it("without work (a run from before work was kept), answers each unanswered call of the last response", () => {
    const history: HistoryItem[] = [
      {
        role: "assistant",
        agent: "desk",
        type: "tool_call",
        content: "",
        tool_calls: [{ id: "old", name: "lookup", arguments: "{}" }],
      },
      { role: "tool", agent: "desk", type: "tool_output", tool_name: "lookup", tool_call_id: "old", content: "done" },
      {
        role: "assistant",
        agent: "desk",
        type: "tool_call",
        content: "",
        tool_calls: [
          { id: "x", name: "lookup", arguments: "{}" },
          { id: "y", name: "refund", arguments: "{}" },
          { id: "z", name: "transfer_to_billing", arguments: "{}" },
        ],
      },
      { role: "tool", agent: "desk", type: "tool_output", tool_name: "lookup", tool_call_id: "x", content: "ok" },
    ];
    const { answers, work: next } = interruptedStep({
      work: null,
      step: "tools",
      current_agent: "billing",
      history: () => history,
    });
    expect(next).toBeNull();
    expect(answers.map((a) => [a.tool_call_id, a.content])).toEqual([
      ["y", INTERRUPTED],
      ["z", JSON.stringify({ assistant: "billing" })],
    ]);
  });

  it("without work and without calls in the history, answers nothing", () => {
    const history: HistoryItem[] = [
      { role: "user", content: "hi" },
      { role: "assistant", agent: "desk", content: "hello" },
    ];
    expect(interruptedStep({ work: null, step: null, current_agent: "desk", history: () => history })).toEqual({
      answers: [],
      work: null,
      interrupted: [],
    });
  });
});
