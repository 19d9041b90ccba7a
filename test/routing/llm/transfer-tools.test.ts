import { describe, expect, it } from "vitest";
import { buildRouterPrompt, buildTransferTools, TRANSFER_PARAMETERS } from "../../../src/routing/llm/transfer-tools";
import { AgentDefinition, type AgentDefinitionInput } from "../../../src/schemas/agent";

const agent = (input: AgentDefinitionInput): AgentDefinition => AgentDefinition.parse(input);

const agents = [
  agent({
    name: "billing",
    title: "Billing",
    description: "Invoices, refunds and payments",
    triggers: {
      keywords: [
        "refund",
        "invoice",
        "charge",
        "payment",
        "billing",
        "receipt",
        "vat",
        "credit",
        "card",
        "overcharged",
      ],
    },
  }),
  agent({ name: "tech-support", description: "Crashes and\n  errors", enabled: true }),
  agent({ name: "legacy", title: "Old desk", description: "Retired", enabled: false }),
];

describe("buildTransferTools", () => {
  it("offers one function tool per enabled agent, in registry order", () => {
    const { tools } = buildTransferTools(agents);
    expect(tools.map((t) => t.function.name)).toEqual(["transfer_to_billing", "transfer_to_tech_support"]);
    expect(tools.every((t) => t.type === "function")).toBe(true);
  });

  it("describes each tool as a handoff to the agent's title (or name)", () => {
    const { tools } = buildTransferTools(agents);
    expect(tools[0]?.function.description).toBe("Hand off to Billing: Invoices, refunds and payments");
    expect(tools[1]?.function.description).toBe("Hand off to tech-support: Crashes and errors");
    const bare = buildTransferTools([agent({ name: "quiet" })]);
    expect(bare.tools[0]?.function.description).toBe("Hand off to quiet.");
  });

  it("takes a required reason and an optional context, nothing else", () => {
    const { tools } = buildTransferTools(agents);
    expect(tools[0]?.function.parameters).toBe(TRANSFER_PARAMETERS);
    expect(TRANSFER_PARAMETERS).toMatchObject({
      type: "object",
      properties: { reason: { type: "string" }, context: { type: "string" } },
      required: ["reason"],
      additionalProperties: false,
    });
    expect(Object.keys(TRANSFER_PARAMETERS.properties as object)).toEqual(["reason", "context"]);
  });

  it("looks agents up by tool name and tool names by agent, disabled agents excluded", () => {
    const { agentByTool, toolByAgent } = buildTransferTools(agents);
    expect(agentByTool.get("transfer_to_tech_support")).toBe("tech-support");
    expect(toolByAgent.get("billing")).toBe("transfer_to_billing");
    expect(toolByAgent.has("legacy")).toBe(false);
    expect(agentByTool.has("transfer_to_legacy")).toBe(false);
  });

  it("keeps colliding agents apart in both the tools and the lookup", () => {
    const { tools, agentByTool } = buildTransferTools([agent({ name: "a-b" }), agent({ name: "a_b" })]);
    expect(tools.map((t) => t.function.name)).toEqual(["transfer_to_a_b_2", "transfer_to_a_b"]);
    expect(agentByTool.get("transfer_to_a_b_2")).toBe("a-b");
    expect(agentByTool.get("transfer_to_a_b")).toBe("a_b");
  });
});

describe("buildRouterPrompt", () => {
  it("is a system message listing each enabled agent with its tool, title, description and a few keywords", () => {
    const prompt = buildRouterPrompt(agents);
    expect(prompt.role).toBe("system");
    expect(prompt.content).toContain("- billing (Billing), tool transfer_to_billing: Invoices, refunds and payments");
    expect(prompt.content).toContain("Keywords: refund, invoice, charge, payment, billing, receipt, vat, credit.");
    expect(prompt.content).not.toContain("overcharged");
    expect(prompt.content).toContain(
      "- tech-support (tech-support), tool transfer_to_tech_support: Crashes and errors",
    );
    expect(prompt.content).toContain("Call exactly one transfer tool");
  });

  it("leaves disabled agents out", () => {
    const prompt = buildRouterPrompt(agents);
    expect(prompt.content).not.toContain("legacy");
    expect(prompt.content).not.toContain("Old desk");
  });

  it("shortens long descriptions and says so when no agent is available", () => {
    const long = buildRouterPrompt([agent({ name: "wordy", description: "x".repeat(1_000) })]);
    expect(long.content).toContain(`${"x".repeat(299)}…`);
    expect(long.content).not.toContain("x".repeat(300));
    expect(buildRouterPrompt([agents[2] as AgentDefinition]).content).toContain("No agents are available.");
  });
});
