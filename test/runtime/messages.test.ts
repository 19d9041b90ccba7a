import { describe, expect, it } from "vitest";
import { agentView, systemPrompt, toChatMessages, withoutCalls } from "../../src/runtime/messages";
import { AgentDefinition } from "../../src/schemas/agent";
import type { HandoffContext, HistoryItem } from "../../src/schemas/handoff";

const user = (content: string): HistoryItem => ({ role: "user", content });
const calls = (id: string, ...names: string[]): HistoryItem => ({
  role: "assistant",
  agent: "desk",
  type: "tool_call",
  content: "",
  tool_calls: names.map((name, i) => ({ id: `${id}${i}`, name, arguments: "{}" })),
});
const out = (id: string, content = "ok"): HistoryItem => ({
  role: "tool",
  agent: "desk",
  type: "tool_output",
  tool_call_id: id,
  content,
});

describe("history as chat messages", () => {
  it("puts each call's output right after it and drops calls without an output and outputs without a call", () => {
    const messages = toChatMessages([user("hi"), calls("a", "x", "y"), user("more"), out("a0", "X"), out("zz")]);
    expect(messages).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: null, tool_calls: [{ id: "a0", name: "x", arguments: "{}" }] },
      { role: "tool", tool_call_id: "a0", content: "X" },
      { role: "user", content: "more" },
    ]);
  });

  it("keeps calls it is told to hide out of view, outputs included", () => {
    const items = withoutCalls([calls("a", "x", "y"), out("a0"), out("a1")], new Set(["a1"]));
    expect(items).toEqual([{ ...calls("a", "x"), tool_calls: [{ id: "a0", name: "x", arguments: "{}" }] }, out("a0")]);
    expect(withoutCalls([calls("b", "x"), out("b0")], new Set(["b0"]))).toEqual([
      { role: "assistant", agent: "desk", type: "message", content: "" },
    ]);
  });
});

describe("what an agent sees", () => {
  const context = {
    to_agent: "billing",
    from_agent: "desk",
    reason: "r",
    conversation_history: [user("filtered")],
    metadata: {
      history_length: 2,
      handoff_chain: ["desk", "billing"],
      chain_depth: 1,
      mode: "transfer",
      history_filters: [],
    },
  } as unknown as HandoffContext;
  const history = [user("one"), user("two"), user("three")].map((item, i) => ({ seq: i + 1, item }));

  it("the target of the last handoff: the history it was handed, then what came after the switch", () => {
    expect(agentView("billing", history, context).map((i) => i.content)).toEqual(["filtered", "three"]);
  });

  it("anyone else: the whole history", () => {
    expect(agentView("desk", history, context).map((i) => i.content)).toEqual(["one", "two", "three"]);
  });

  it("the system prompt: who the agent is, its instructions, and the preamble when it was handed the session", () => {
    const agent = AgentDefinition.parse({ name: "billing", title: "Billing", instructions: "Be brief." });
    const prompt = systemPrompt(agent, { ...context, summary: null, context: {}, payload: {}, task: null });
    expect(prompt).toMatch(/^You are 'billing' \(Billing\)\.\n\nBe brief\.\n\n# Handoff/);
  });
});
