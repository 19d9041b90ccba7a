import { describe, expect, it } from "vitest";
import { BETA_KEY, call } from "./helpers";

const billing = {
  name: "billing",
  title: "Billing",
  description: "Invoices, refunds and payments",
  triggers: { keywords: ["refund", "invoice"], patterns: ["charged\\s+twice"], priority: 80 },
};

describe("agent registry API", () => {
  it("creates (201), replaces (200) and reads an agent with defaults filled in", async () => {
    const created = await call("PUT", "/v1/agents/billing", billing);
    expect(created.status).toBe(201);
    expect(created.json.definition).toMatchObject({ name: "billing", kind: "llm", enabled: true, max_concurrent_sessions: 100 });
    const replaced = await call("PUT", "/v1/agents/billing", { ...billing, description: "Money matters" });
    expect(replaced.status).toBe(200);
    const read = await call("GET", "/v1/agents/billing");
    expect(read.json.definition.description).toBe("Money matters");
  });

  it("refuses a missing key with 401 and keeps tenants apart", async () => {
    expect((await call("GET", "/v1/agents", undefined, { key: null })).status).toBe(401);
    expect((await call("GET", "/v1/agents", undefined, { key: "wrong-key-123" })).json.error.code).toBe("UNAUTHORIZED");
    await call("PUT", "/v1/agents/billing", billing);
    const other = await call("GET", "/v1/agents/billing", undefined, { key: BETA_KEY });
    expect(other.status).toBe(404);
    expect(other.json.error.code).toBe("AGENT_NOT_FOUND");
  });
});
