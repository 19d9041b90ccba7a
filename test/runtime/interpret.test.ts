import { describe, expect, it } from "vitest";
import { READ_TOOL_OUTPUT_SPEC } from "../../src/memory/tool-output";
import { agentTools, withMemoryTools } from "../../src/runtime/agent-tools";
import { escalationOutput, handoffOutput, interpretTurn, schemaErrors } from "../../src/runtime/interpret";
import { AgentDefinition } from "../../src/schemas/agent";

const desk = AgentDefinition.parse({
  name: "desk",
  handoffs: [
    "billing",
    { to: "forms", input_schema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } },
  ],
});
const directory = new Map(
  [desk, AgentDefinition.parse({ name: "billing" }), AgentDefinition.parse({ name: "forms" })].map(
    (a) => [a.name, a] as const,
  ),
);
const tools = agentTools({ agent: desk, directory, stack: ["desk"], state: {}, registry_tools: new Map() });
const call = (id: string, name: string, args: unknown = { reason: "r" }) => ({
  id,
  name,
  arguments: typeof args === "string" ? args : JSON.stringify(args),
});

describe("what an agent's response means", () => {
  it("text only: the final answer", () => {
    const d = interpretTurn("desk", { content: "Hello", tool_calls: [] }, tools);
    expect(d).toEqual({
      assistant: { role: "assistant", agent: "desk", type: "message", content: "Hello" },
      outputs: [],
      action: { type: "final", output: "Hello" },
      ignored_call_ids: [],
      calls: [],
      memory_calls: [],
    });
  });

  it("a transfer: the handoff, with its reason; the assistant item keeps the call", () => {
    const d = interpretTurn(
      "desk",
      { content: null, tool_calls: [call("c1", "transfer_to_billing", { reason: " invoices " })] },
      tools,
    );
    expect(d.action).toMatchObject({
      type: "handoff",
      binding: { kind: "transfer", target: "billing" },
      reason: "invoices",
    });
    expect(d.assistant).toMatchObject({ type: "tool_call", tool_calls: [{ id: "c1", name: "transfer_to_billing" }] });
    expect(d.outputs).toEqual([]);
  });

  it("several handoff calls: the first is carried out, the rest answered with an error and marked ignored", () => {
    const d = interpretTurn(
      "desk",
      {
        content: null,
        tool_calls: [
          call("a", "transfer_to_billing"),
          call("b", "escalate_to_human"),
          call("c", "transfer_to_forms", { reason: "r", input: { id: "x" } }),
        ],
      },
      tools,
    );
    expect(d.action).toMatchObject({ type: "handoff", call: { id: "a" } });
    expect(d.ignored_call_ids).toEqual(["b", "c"]);
    expect(d.outputs.map((o) => [o.tool_call_id, o.content.startsWith("Error: not run")])).toEqual([
      ["b", true],
      ["c", true],
    ]);
  });

  it("unknown tools and handoffs outside the offer get errors naming what may be called; nothing else happens", () => {
    const d = interpretTurn(
      "desk",
      { content: null, tool_calls: [call("x", "transfer_to_ghost"), call("y", "search_web")] },
      tools,
    );
    expect(d.action).toEqual({ type: "continue" });
    expect(d.outputs[0]!.content).toContain("Your allowed targets are: billing, forms");
    expect(d.outputs[1]!.content).toContain(
      "'search_web' is not a tool you may use; it was not run. Your allowed tools are: none.",
    );
  });

  it("bad arguments: not JSON, no reason, input against the schema — each an error the model can correct", () => {
    for (const args of ["{nope", { reason: "" }, { reason: "r", input: { id: 7 } }]) {
      const name = typeof args === "object" && "input" in args ? "transfer_to_forms" : "transfer_to_billing";
      const d = interpretTurn("desk", { content: null, tool_calls: [call("z", name, args)] }, tools);
      expect(d.action).toEqual({ type: "continue" });
      expect(d.outputs[0]!.content).toMatch(/^Error: /);
    }
    expect(schemaErrors({ type: "object", required: ["id"] }, {})).toHaveLength(1);
    expect(schemaErrors({ type: "object", required: ["id"] }, { id: 1 })).toEqual([]);
  });

  it("escalate_to_human: the run waits for a person", () => {
    const d = interpretTurn(
      "desk",
      { content: "One moment.", tool_calls: [call("e", "escalate_to_human", { reason: "refund over the limit" })] },
      tools,
    );
    expect(d.action).toMatchObject({ type: "escalate", reason: "refund over the limit" });
  });

  it("answers a handoff call with the outcome and an escalation with the person's reply", () => {
    const c = call("h", "transfer_to_billing");
    expect(handoffOutput("desk", c, { ok: true, target: "billing" }).content).toBe('{"assistant":"billing"}');
    expect(
      handoffOutput("desk", c, { ok: false, code: "AGENT_UNAVAILABLE", message: "full", allowed: ["billing"] }).content,
    ).toContain("(AGENT_UNAVAILABLE)");
    expect(escalationOutput("desk", c, { answered: true, text: "yes" })).toMatchObject({
      role: "tool",
      tool_call_id: "h",
      content: "A person answered: yes",
    });
  });

  it("a memory tool: answered by the session when its arguments fit, an error the model sees when not", () => {
    const withMemory = withMemoryTools(tools, [READ_TOOL_OUTPUT_SPEC]);
    const good = call("m1", "read_tool_output", { call_id: "c9", offset: 100 });
    const bad = call("m2", "read_tool_output", { call_id: "c9", offset: -1 });
    const d = interpretTurn("desk", { content: null, tool_calls: [good, bad] }, withMemory);
    expect(d.memory_calls).toEqual([good]);
    expect(d.calls).toEqual([]);
    expect(d.outputs).toEqual([
      expect.objectContaining({ tool_call_id: "m2", content: expect.stringMatching(/^Error: /) }),
    ]);
    expect(d.action).toEqual({ type: "continue" });
    // Offered only when added: without it, the same call is one the agent may not make.
    expect(interpretTurn("desk", { content: null, tool_calls: [good] }, tools).memory_calls).toEqual([]);
  });
});
