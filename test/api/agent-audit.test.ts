import { describe, expect, it } from "vitest";
import { eventually } from "../eventually";
import { call, OPERATOR_KEY } from "./helpers";

/**
 * The registry writes in the audit trail as a client reads it (docs/agents.md, Audit): each
 * PUT and DELETE that lands is one record in `GET /v1/audit`, found by agent and by action;
 * a refused write adds none.
 */

interface Record {
  id: string;
  action: string;
  agent: string | null;
  session_id: string | null;
  actor: string;
  actor_type: string;
  details: { registry_version?: number; changed?: string[]; recovered?: boolean };
}

/** The tenant's agent records about `agent`, oldest first. */
async function recordsOf(agent: string): Promise<Record[]> {
  const page = await call("GET", `/v1/audit?agent=${agent}&limit=200`);
  expect(page.status).toBe(200);
  return (page.json.items as Record[]).filter((r) => r.action.startsWith("agent.")).reverse();
}

const listed = (agent: string, count: number) =>
  eventually(
    () => recordsOf(agent),
    (records) => records.length >= count,
    { what: `${count} agent records about ${agent} in GET /v1/audit` },
  );

const version = async () => (await call("GET", "/v1/route/stats")).json.registry_version as number;

describe("GET /v1/audit after registry writes", () => {
  it("holds one record for each create, update and delete, by the API, tenant-level, with the version", async () => {
    const parcel = { name: "parcels", description: "Parcels", triggers: { keywords: ["parcel"] } };
    expect((await call("PUT", "/v1/agents/parcels", parcel)).status).toBe(201);
    const created = await version();
    const examples = ["where is my parcel", "my parcel is late"];
    const edited = { ...parcel, triggers: { ...parcel.triggers, examples } };
    expect((await call("PUT", "/v1/agents/parcels", edited)).status).toBe(200);
    const updated = await version();
    expect((await call("DELETE", "/v1/agents/parcels")).status).toBe(204);
    const deleted = await version();

    const records = await listed("parcels", 3);
    expect(records.map((r) => [r.action, r.agent, r.session_id, r.actor, r.actor_type, r.details])).toEqual([
      ["agent.created", "parcels", null, "api", "user", { registry_version: created }],
      ["agent.updated", "parcels", null, "api", "user", { registry_version: updated, changed: ["triggers"] }],
      ["agent.deleted", "parcels", null, "api", "user", { registry_version: deleted }],
    ]);
    // Readable by action too, and the examples' words are not in the trail.
    const byAction = (await call("GET", "/v1/audit?action=agent.updated")).json.items as Record[];
    expect(byAction.map((r) => r.id)).toContain(records[1]!.id);
    expect(JSON.stringify(records)).not.toContain("late");
  });

  it("adds nothing for an invalid body, a pattern past the budget, a delete of no agent, or the agents quota", async () => {
    expect((await call("PUT", "/v1/agents/kept", { name: "kept" })).status).toBe(201);
    await listed("kept", 1);

    expect((await call("PUT", "/v1/agents/kept", { name: "kept", priority: "high" })).status).toBe(400);
    expect((await call("PUT", "/v1/agents/kept", { name: "other" })).status).toBe(400);
    const big = Array.from({ length: 100 }, (_, i) => `(.*a){${150 + i}}`);
    expect((await call("PUT", "/v1/agents/heavy-1", { name: "heavy-1", triggers: { patterns: big } })).status).toBe(
      201,
    );
    const budget = await call("PUT", "/v1/agents/kept", { name: "kept", triggers: { patterns: big } });
    expect([budget.status, budget.json.error.code]).toEqual([400, "PATTERN_BUDGET_EXCEEDED"]);
    expect((await call("DELETE", "/v1/agents/nobody")).status).toBe(404);
    const held = (await call("GET", "/v1/agents?limit=200")).json.items.length;
    const limited = await call("PUT", "/v1/operator/tenants/alpha/quotas", { agents: held }, { key: OPERATOR_KEY });
    expect(limited.status).toBe(200);
    const quota = await call("PUT", "/v1/agents/extra", { name: "extra" });
    expect([quota.status, quota.json.error.code]).toEqual([429, "QUOTA_EXCEEDED"]);
    // A write that lands after them is recorded: had the refusals left records, they would be read before it.
    expect((await call("PUT", "/v1/agents/kept", { name: "kept", description: "Still here" })).status).toBe(200);

    const kept = await listed("kept", 2);
    expect(kept.map((r) => [r.action, r.details.changed])).toEqual([
      ["agent.created", undefined],
      ["agent.updated", ["description"]],
    ]);
    for (const name of ["nobody", "extra", "other"]) expect(await recordsOf(name)).toEqual([]);
  });
});
