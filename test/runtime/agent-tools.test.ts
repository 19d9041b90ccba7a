import { describe, expect, it } from "vitest";
import { agentTools, returnToolName } from "../../src/runtime/agent-tools";
import { AgentDefinition, type AgentDefinitionInput } from "../../src/schemas/agent";

const def = (input: AgentDefinitionInput) => AgentDefinition.parse(input);
const directory = new Map(
  [
    def({
      name: "desk",
      handoffs: [
        "billing",
        "tech-eu",
        { to: "vip", condition: "tier == 'gold'" },
        "retired",
        "ghost",
        { to: "forms", description: "Custom words", input_schema: { type: "object" } },
      ],
    }),
    def({ name: "billing", title: "Billing", description: "Invoices and refunds" }),
    def({ name: "tech-eu", description: "" }),
    def({ name: "vip", description: "Gold customers" }),
    def({ name: "retired", enabled: false }),
    def({ name: "forms", description: "Order forms" }),
  ].map((a) => [a.name, a] as const),
);
const desk = directory.get("desk")!;

describe("the tools an agent is offered", () => {
  it("one transfer per takeable whitelist entry, with the target's words; escalate always; no return at the root", () => {
    const { tools, bindings, allowed_targets } = agentTools({
      agent: desk,
      directory,
      stack: ["desk"],
      state: {},
      registry_tools: new Map(),
    });
    expect(tools.map((t) => t.function.name)).toEqual([
      "transfer_to_billing",
      "transfer_to_tech_eu",
      "transfer_to_forms",
      "escalate_to_human",
    ]);
    expect(tools[0]!.function.description).toBe("Hand off to Billing: Invoices and refunds");
    expect(tools[1]!.function.description).toBe("Hand off to tech-eu.");
    expect(tools[2]!.function.description).toBe("Custom words");
    expect(bindings.get("transfer_to_tech_eu")).toMatchObject({ kind: "transfer", target: "tech-eu" });
    expect(allowed_targets).toEqual(["billing", "tech-eu", "vip", "retired", "ghost", "forms"]);
  });

  it("offers a conditional entry only while its condition holds", () => {
    const gold = agentTools({
      agent: desk,
      directory,
      stack: ["desk"],
      state: { tier: "gold" },
      registry_tools: new Map(),
    });
    expect(gold.tools.map((t) => t.function.name)).toContain("transfer_to_vip");
  });

  it("types an entry's input with its input_schema, beside the reason", () => {
    const forms = agentTools({
      agent: desk,
      directory,
      stack: ["desk"],
      state: {},
      registry_tools: new Map(),
    }).tools.find((t) => t.function.name === "transfer_to_forms")!;
    expect(forms.function.parameters).toMatchObject({
      required: ["reason", "input"],
      properties: { input: { type: "object" } },
    });
  });

  it("offers the way back when the stack has one, and never a target already on it", () => {
    const billing = def({ name: "billing", handoffs: ["desk", "forms"] });
    const { tools, bindings } = agentTools({
      agent: billing,
      directory,
      stack: ["desk", "billing"],
      state: {},
      registry_tools: new Map(),
    });
    expect(tools.map((t) => t.function.name)).toEqual(["transfer_to_forms", "return_to_desk", "escalate_to_human"]);
    expect(bindings.get("return_to_desk")).toEqual({ kind: "return", target: "desk" });
    expect(returnToolName("tech-EU.x")).toBe("return_to_tech_eu_x");
  });
});
