import { describe, expect, it } from "vitest";
import {
  type AgentWriteIntent,
  agentWriteIntent,
  agentWriteRecord,
  changedFields,
  recoveredOutcome,
} from "../../src/audit/agent-events";
import { AuditRecord } from "../../src/audit/record";
import { ulidTime } from "../lib/decode-ulid";

const at = Date.UTC(2026, 10, 29, 12, 0, 0, 0);
const iso = new Date(at).toISOString();
const text = (definition: Record<string, unknown>) => JSON.stringify(definition);

describe("changedFields", () => {
  it("names the top-level fields that differ, added or removed, in name order", () => {
    expect(
      changedFields(
        { name: "a", description: "old", triggers: { keywords: ["x"] }, tools: ["t"] },
        { name: "a", description: "new", triggers: { keywords: ["x"], examples: ["e"] }, title: "A" },
      ),
    ).toEqual(["description", "title", "tools", "triggers"]);
  });

  it("sees no change in objects whose keys come in another order, and one in arrays in another order", () => {
    expect(changedFields({ t: { a: 1, b: [1, 2] } }, { t: { b: [1, 2], a: 1 } })).toEqual([]);
    expect(changedFields({ t: [1, 2] }, { t: [2, 1] })).toEqual(["t"]);
    expect(changedFields({ t: null }, { t: {} })).toEqual(["t"]);
  });
});

describe("agentWriteRecord", () => {
  const put = agentWriteIntent(
    "alpha",
    "billing",
    at,
    text({ name: "billing", description: "a" }),
    text({ name: "billing", description: "b" }),
  );

  it("records a create, an update with its changed fields, and a delete, tenant-level, by the API", () => {
    const created = agentWriteRecord(agentWriteIntent("alpha", "billing", at, null, text({ name: "billing" })), {
      landed: true,
      created: true,
      registry_version: 4,
      recovered: false,
    })!;
    expect(AuditRecord.parse(created)).toEqual(created);
    expect(created).toMatchObject({
      tenant: "alpha",
      session_id: null,
      handoff_id: null,
      action: "agent.created",
      agent: "billing",
      actor: "api",
      actor_type: "user",
      at: iso,
      details: { registry_version: 4 },
    });
    expect(ulidTime(created.id)).toBe(at);
    const updated = agentWriteRecord(put, { landed: true, created: false, registry_version: 5, recovered: false })!;
    expect([updated.id, updated.action, updated.details]).toEqual([
      put.id,
      "agent.updated",
      { registry_version: 5, changed: ["description"] },
    ]);
    const gone = agentWriteIntent("alpha", "billing", at, text({ name: "billing" }), null);
    expect(
      agentWriteRecord(gone, { landed: true, created: false, registry_version: 6, recovered: true }),
    ).toMatchObject({
      action: "agent.deleted",
      details: { registry_version: 6, recovered: true },
    });
  });

  it("records nothing for a write that did not land", () => {
    expect(agentWriteRecord(put, { landed: false })).toBeNull();
  });
});

describe("recoveredOutcome", () => {
  const intent = (fields: Partial<AgentWriteIntent>): AgentWriteIntent => ({
    id: "01KB0000000000000000000000",
    at,
    tenant: "alpha",
    agent: "billing",
    kind: "put",
    existed: true,
    changed: [],
    ...fields,
  });
  const row = (created_at: string, updated_at: string) => ({ created_at, updated_at });
  const earlier = new Date(at - 1).toISOString();

  it("takes a put as landed when the agent carries the write's own time, created when both times are it", () => {
    expect(recoveredOutcome(intent({}), { agent: row(earlier, iso), registry_version: 7 })).toEqual({
      landed: true,
      created: false,
      registry_version: 7,
      recovered: true,
    });
    expect(recoveredOutcome(intent({ existed: false }), { agent: row(iso, iso), registry_version: 7 })).toMatchObject({
      landed: true,
      created: true,
    });
  });

  it("takes a put as not landed when the agent is absent or carries another time", () => {
    expect(recoveredOutcome(intent({}), { agent: null, registry_version: 7 })).toEqual({ landed: false });
    expect(recoveredOutcome(intent({}), { agent: row(earlier, earlier), registry_version: 7 })).toEqual({
      landed: false,
    });
  });

  it("takes a delete as landed only when an agent that was there is gone", () => {
    const del = (existed: boolean) => intent({ kind: "delete", existed, changed: null });
    expect(recoveredOutcome(del(true), { agent: null, registry_version: 8 })).toMatchObject({ landed: true });
    expect(recoveredOutcome(del(true), { agent: row(earlier, earlier), registry_version: 8 })).toEqual({
      landed: false,
    });
    expect(recoveredOutcome(del(false), { agent: null, registry_version: 8 })).toEqual({ landed: false });
  });
});
