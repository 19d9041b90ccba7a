import { call } from "./helpers";

/**
 * The registry the handoff API tests share (D1 is per test file, so each file loads it):
 * a front desk with specialists, a one-seat supervisor, a disabled agent, a whitelisted
 * agent that does not exist, and a conditional entry.
 */
export const AGENTS = [
  {
    name: "triage",
    max_concurrent_sessions: 1000,
    handoffs: [
      "billing",
      "technical",
      "ghost",
      "retired",
      { to: "sales", condition: "tier == 'gold'" },
      { to: "supervisor", filter: { redact_pii: true, max_history: 4, remove_tool_items: true } },
    ],
  },
  {
    name: "billing",
    capabilities: [
      { name: "refunds", proficiency: 0.9 },
      { name: "invoices", proficiency: 0.8, tags: ["payments"] },
    ],
    handoffs: ["technical", "supervisor"],
    max_concurrent_sessions: 50,
  },
  {
    name: "technical",
    capabilities: [
      { name: "debugging", proficiency: 0.8, tags: ["errors"] },
      { name: "refunds", proficiency: 0.3 },
    ],
    handoffs: ["billing", "supervisor"],
    max_concurrent_sessions: 50,
  },
  { name: "sales", capabilities: [{ name: "pricing" }], handoffs: ["billing"] },
  { name: "supervisor", kind: "human", max_concurrent_sessions: 1 },
  { name: "retired", enabled: false },
] as const;

export async function loadAgents(): Promise<void> {
  for (const agent of AGENTS) {
    const response = await call("PUT", `/v1/agents/${agent.name}`, agent);
    if (response.status >= 300)
      throw new Error(`PUT ${agent.name}: ${response.status} ${JSON.stringify(response.json)}`);
  }
}

/** A new session held by `agent`; returns its id. */
export async function newSession(agent = "triage", extra: Record<string, unknown> = {}): Promise<string> {
  const response = await call("POST", "/v1/sessions", { agent, ...extra });
  if (response.status !== 201)
    throw new Error(`POST /v1/sessions: ${response.status} ${JSON.stringify(response.json)}`);
  return response.json.id as string;
}

/** POST /v1/handoffs with the usual defaults. */
export function handoff(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return call("POST", "/v1/handoffs", { reason: "the customer needs a specialist", ...body }, { headers });
}
