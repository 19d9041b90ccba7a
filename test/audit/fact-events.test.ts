import { describe, expect, it } from "vitest";
import { factDeleted, factWritten } from "../../src/audit/fact-events";
import { API_ACTOR, AuditRecord, agentActor } from "../../src/audit/record";

const scope = { tenant: "alpha", session_id: "ses_1" };
const now = Date.UTC(2026, 10, 29, 10, 0, 0);

describe("memory audit records", () => {
  it("records a fact written by an agent: the key, never the value", () => {
    const record = factWritten(scope, agentActor("support"), now, { agent: "support", key: "customer" });
    expect(AuditRecord.parse(record)).toEqual(record);
    expect(record).toMatchObject({
      action: "memory.fact_written",
      agent: "support",
      actor: "support",
      actor_type: "agent",
      details: { key: "customer" },
    });
    expect(Object.keys(record.details)).toEqual(["key"]);
  });

  it("records a fact deleted by a person through the API, about the session's agent", () => {
    const record = factDeleted(scope, API_ACTOR, now, { agent: "billing", key: "order.id" });
    expect(AuditRecord.parse(record)).toEqual(record);
    expect(record).toMatchObject({
      action: "memory.fact_deleted",
      agent: "billing",
      actor: "api",
      actor_type: "user",
      details: { key: "order.id" },
    });
  });
});
