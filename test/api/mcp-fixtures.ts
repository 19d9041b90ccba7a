import { call } from "./helpers";

/**
 * The team the MCP server tests talk to (test/api/mcp-server*.test.ts): a triage agent that
 * hands off to billing, billing with a refund tool that needs approval, an internal desk the
 * expose tests hide, and a person.
 */

export const AGENTS = [
  {
    name: "triage",
    description: "Greets customers and hands them to the right desk",
    handoffs: ["billing"],
  },
  {
    name: "billing",
    title: "Billing",
    description: "Invoices, refunds and payments",
    triggers: { keywords: ["refund", "invoice"], examples: ["I want a refund"], priority: 90 },
    capabilities: [{ name: "refunds" }],
    tools: { allow: ["refund"], confirmation: { require: ["refund"], timeout_s: 600 } },
  },
  {
    name: "secret-desk",
    description: "Internal refunds desk, not for MCP clients",
    triggers: { keywords: ["chargeback"], examples: ["chargeback dispute"], priority: 100 },
  },
  { name: "clerk", kind: "human", description: "A person at the desk", timeout_s: 3600 },
];

/** Registers the refund tool and the team for alpha; rule routing, the model at the fake OpenAI endpoint. */
export async function setUpTeam(): Promise<void> {
  const tool = await call("PUT", "/v1/tools/refund", {
    name: "refund",
    kind: "http",
    description: "Refunds an order",
    url: "https://tools.test/refund",
    parameters: { type: "object", properties: { order_id: { type: "string" } } },
  });
  if (tool.status >= 300) throw new Error(JSON.stringify(tool.json));
  for (const agent of AGENTS) {
    const res = await call("PUT", `/v1/agents/${agent.name}`, agent);
    if (res.status >= 300) throw new Error(`PUT ${agent.name}: ${JSON.stringify(res.json)}`);
  }
  await call("PUT", "/v1/config/routing", {
    strategy: "rule",
    threshold: 50,
    llm: { provider: "openai", model: "fake-model" },
  });
}
