import { describe, expect, it } from "vitest";
import { agentTools } from "../../src/runtime/agent-tools";
import { checkOutput, repairMessages } from "../../src/runtime/guardrail";
import { interpretTurn } from "../../src/runtime/interpret";
import {
  approvalPrompt,
  decideApproval,
  nextEffect,
  planWork,
  withApprovalsAsked,
  withCallsDone,
} from "../../src/runtime/tool-work";
import { AgentDefinition } from "../../src/schemas/agent";
import { ToolDefinition } from "../../src/schemas/tool";

const registry = new Map(
  [
    ToolDefinition.parse({
      name: "lookup",
      kind: "http",
      url: "https://t.test/l",
      parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
    }),
    ToolDefinition.parse({ name: "refund", kind: "http", url: "https://t.test/r" }),
    ToolDefinition.parse({ name: "pick", kind: "client" }),
  ].map((t) => [t.name, t] as const),
);
const desk = AgentDefinition.parse({
  name: "desk",
  handoffs: ["billing", { to: "vault", requires_approval: true }],
  tools: {
    allow: ["lookup", "refund", "pick"],
    confirmation: {
      require: ["refund"],
      prompt_template:
        "Refund {{arguments.order.id}} ({{arguments.amount}}) by {{agent}} via {{tool}}: {{arguments}}{{nope}}",
    },
  },
});
const directory = new Map(
  [desk, AgentDefinition.parse({ name: "billing" }), AgentDefinition.parse({ name: "vault" })].map(
    (a) => [a.name, a] as const,
  ),
);
const offer = agentTools({ agent: desk, directory, stack: ["desk"], state: {}, registry_tools: registry });
const call = (id: string, name: string, args: unknown) => ({ id, name, arguments: JSON.stringify(args) });
const work = (...calls: ReturnType<typeof call>[]) =>
  planWork(desk, interpretTurn("desk", { content: null, tool_calls: calls }, offer));

describe("a response's tool calls, step by step", () => {
  it("asks every approval first, then runs http tools, then hands client tools over, and the handoff comes last", () => {
    let w = work(
      call("1", "pick", {}),
      call("2", "lookup", { id: "a" }),
      call("3", "refund", {}),
      call("4", "transfer_to_billing", { reason: "r" }),
    )!;
    expect(w.calls.map((c) => [c.id, c.kind, c.approval])).toEqual([
      ["1", "client", "none"],
      ["2", "http", "none"],
      ["3", "http", "pending"],
    ]);
    expect(nextEffect(w)).toEqual({ type: "ask_approval", calls: [{ id: "3", name: "refund", arguments: "{}" }] });
    w = withApprovalsAsked(w, new Map([["3", "inb_3"]]));
    expect(nextEffect(w)).toEqual({ type: "await_approval" });
    const approved = decideApproval(w, "inb_3", "approve", { by: "person" })!;
    expect(approved.output).toBeNull();
    w = approved.work;
    expect(nextEffect(w)).toMatchObject({ type: "run_calls", calls: [{ id: "2" }, { id: "3" }] });
    w = withCallsDone(w, new Set(["2", "3"]));
    expect(nextEffect(w)).toMatchObject({ type: "await_client", calls: [{ id: "1" }] });
    w = withCallsDone(w, new Set(["1"]));
    expect(nextEffect(w)).toMatchObject({
      type: "handoff",
      handoff: { id: "4", type: "transfer", target: "billing", approval: "none" },
    });
    expect(nextEffect({ ...w, handoff: null })).toEqual({ type: "done" });
  });

  it("a denied call gets its output at once and is never run; a denied handoff is dropped", () => {
    let w = withApprovalsAsked(
      work(call("3", "refund", {}), call("5", "transfer_to_vault", { reason: "r" }))!,
      new Map([
        ["3", "inb_3"],
        ["5", "inb_5"],
      ]),
    );
    const denied = decideApproval(w, "inb_3", "deny", { by: "person", reason: "too much" })!;
    expect(denied.output).toMatchObject({
      role: "tool",
      tool_call_id: "3",
      content: "Error: Not run: a person denied it: too much",
    });
    w = denied.work;
    expect(nextEffect(w)).toEqual({ type: "await_approval" });
    const timedOut = decideApproval(w, "inb_5", "deny", { by: "timeout", timeout_s: 300 })!;
    expect(timedOut.output!.content).toBe("Error: The handoff was not made: nobody approved it within 300 s.");
    expect(nextEffect(timedOut.work)).toEqual({ type: "done" });
    // A second decision on the same item finds no open question.
    expect(decideApproval(timedOut.work, "inb_5", "approve", { by: "person" })).toBeNull();
  });

  it("nothing to do beyond the known outputs: no work", () => {
    expect(work(call("9", "unknown_tool", {}))).toBeNull();
    expect(work(call("9", "lookup", { wrong: 1 }))).toBeNull();
  });

  it("fills the approval prompt from the template; unknown placeholders stay empty", () => {
    const prompt = approvalPrompt(desk, call("3", "refund", { order: { id: "o-1" }, amount: 40 }));
    expect(prompt).toBe('Refund o-1 (40) by desk via refund: {"order":{"id":"o-1"},"amount":40}');
    const plain = AgentDefinition.parse({ name: "plain" });
    expect(approvalPrompt(plain, call("1", "x", { a: 1 }))).toBe(`'plain' wants to call 'x' with {"a":1}.`);
  });
});

describe("output guardrails", () => {
  const guarded = AgentDefinition.parse({
    name: "g",
    guardrails: { output_schema: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] } },
  });

  it("passes fitting JSON, and names what is wrong otherwise", () => {
    expect(checkOutput(guarded, '{"answer":"yes"}')).toEqual({ ok: true });
    expect(checkOutput(guarded, "plain words")).toEqual({ ok: false, errors: ["the output is not JSON"] });
    const wrong = checkOutput(guarded, '{"answer":7}');
    expect(wrong.ok).toBe(false);
    expect(!wrong.ok && wrong.errors.join()).toContain("#/answer");
    expect(checkOutput(AgentDefinition.parse({ name: "free" }), "anything")).toEqual({ ok: true });
  });

  it("the repair request quotes the failed answer and lists the errors", () => {
    const messages = repairMessages("nope", ["a", "b"]);
    expect(messages[0]).toEqual({ role: "assistant", content: "nope" });
    expect(messages[1]!.content).toContain("- a\n- b");
  });
});
