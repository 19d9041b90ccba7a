import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type AgentAudit, WRITE_CHECK_AFTER_MS } from "../../../durable-objects/router/agent-audit";
import { ROUTER_MIGRATIONS } from "../../../durable-objects/router/schema";
import { createSql, migrate, schemaVersion } from "../../../durable-objects/shared/sql";
import { agentWriteIntent } from "../../../src/audit/agent-events";
import { queryAudit } from "../../../src/audit/d1-store";
import type { AuditRecord } from "../../../src/audit/record";
import { findAssignment } from "../../../src/audit/shard-store";
import { unwrap } from "../../../src/errors";
import { definitionText, putAgent } from "../../../src/registry/store";
import { routerRpc } from "../../../src/rpc/stubs";
import { AgentDefinition } from "../../../src/schemas/agent";
import { heldAssignment } from "../../../src/services/tenant-shards";
import { eventually } from "../../eventually";
import { shardOf } from "../../shards";
import type { RouterDO } from "../../worker";

/**
 * The audit of registry writes in the router object: each write that lands leaves one record in
 * its outbox, flushed to the tenant's shard by the alarm; a refused write leaves none; a flush
 * that fails is sent again; an intent a crash left is settled by reading the registry.
 */

let tenants = 0;
const newTenant = () => `agent-audit-${++tenants}`;
const rpc = (tenant: string) => routerRpc(env, tenant);
const stub = (tenant: string) => env.ROUTERS.get(env.ROUTERS.idFromName(tenant)) as DurableObjectStub<RouterDO>;
const agent = (fields: Record<string, unknown>) => AgentDefinition.parse(fields);

/** The object's audit part, inside the object. */
const inObject = <T>(tenant: string, work: (audit: AgentAudit, router: RouterDO) => T | Promise<T>) =>
  runInDurableObject(stub(tenant), (router: RouterDO) =>
    work((router as unknown as { audit: AgentAudit }).audit, router),
  );

/** The object's own records (flushed or not) and the intents it holds. */
const held = (tenant: string) =>
  inObject(tenant, (audit) => ({
    records: audit.outbox.list({ limit: 100 }),
    intents: audit.intents(),
    pending: audit.outbox.pendingCount(),
  }));

/** The tenant's agent records in D1, oldest first. */
async function inD1(tenant: string): Promise<AuditRecord[]> {
  const { records } = await queryAudit(await shardOf(tenant), tenant, { limit: 100 });
  return records.filter((r) => r.action.startsWith("agent.")).reverse();
}

const recordsInD1 = (tenant: string, count: number, what: string) =>
  eventually(
    () => inD1(tenant),
    (records) => records.length >= count,
    { what },
  );

describe("registry writes in the audit trail", () => {
  it("records a create, an update naming the fields it changed, and a delete, each once, in D1", async () => {
    const tenant = newTenant();
    const first = agent({ name: "billing", description: "Invoices", triggers: { keywords: ["refund"] } });
    expect(unwrap(await rpc(tenant).putAgent(tenant, first)).created).toBe(true);
    const examples = Array.from({ length: 50 }, (_, i) => `an example that stays in the registry ${i}`);
    const second = agent({
      name: "billing",
      description: "Invoices and refunds",
      triggers: { keywords: ["refund"], examples },
    });
    expect(unwrap(await rpc(tenant).putAgent(tenant, second)).created).toBe(false);
    expect(unwrap(await rpc(tenant).deleteAgent(tenant, "billing")).deleted).toBe(true);

    const records = await recordsInD1(tenant, 3, "three agent records in D1");
    const versions = await env.DB.prepare("SELECT version FROM registry_versions WHERE tenant = ?1")
      .bind(tenant)
      .first<number>("version");
    expect(records.map((r) => [r.action, r.agent, r.session_id, r.actor, r.actor_type, r.details])).toEqual([
      ["agent.created", "billing", null, "api", "user", { registry_version: 1 }],
      ["agent.updated", "billing", null, "api", "user", { registry_version: 2, changed: ["description", "triggers"] }],
      ["agent.deleted", "billing", null, "api", "user", { registry_version: 3 }],
    ]);
    expect(versions).toBe(3);
    // Names only: the examples stay in the registry.
    expect(JSON.stringify(records)).not.toContain("an example");
    // The object keeps them (read-your-writes), every one sent, and no intent is left.
    expect(await held(tenant)).toMatchObject({ intents: [], pending: 0 });
    expect((await held(tenant)).records.map((r) => r.id)).toEqual(records.map((r) => r.id));
  });

  it("records a put that changes nothing as an update with nothing changed; a delete of nothing not at all", async () => {
    const tenant = newTenant();
    const same = agent({ name: "desk", description: "The front desk" });
    unwrap(await rpc(tenant).putAgent(tenant, same));
    unwrap(await rpc(tenant).putAgent(tenant, same));
    expect(unwrap(await rpc(tenant).deleteAgent(tenant, "nobody")).deleted).toBe(false);
    const records = await recordsInD1(tenant, 2, "two agent records in D1");
    expect(records.map((r) => [r.action, r.details])).toEqual([
      ["agent.created", { registry_version: 1 }],
      ["agent.updated", { registry_version: 2, changed: [] }],
    ]);
    expect(await held(tenant)).toMatchObject({ intents: [] });
    expect((await held(tenant)).records).toHaveLength(2);
  });

  it("records nothing for a write the pattern budget or the agents quota refuses", async () => {
    const tenant = newTenant();
    unwrap(await rpc(tenant).putAgent(tenant, agent({ name: "one" })));
    const quota = await rpc(tenant).putAgent(tenant, agent({ name: "two" }), 1);
    expect(!quota.ok && quota.error.code).toBe("QUOTA_EXCEEDED");
    const big = Array.from({ length: 100 }, (_, i) => `(.*a){${150 + i}}`);
    unwrap(await rpc(tenant).putAgent(tenant, agent({ name: "heavy-1", triggers: { patterns: big } })));
    const budget = await rpc(tenant).putAgent(tenant, agent({ name: "heavy-2", triggers: { patterns: big } }));
    expect(!budget.ok && budget.error.code).toBe("PATTERN_BUDGET_EXCEEDED");

    const records = await recordsInD1(tenant, 2, "the two writes that landed");
    expect(records.map((r) => [r.action, r.agent])).toEqual([
      ["agent.created", "one"],
      ["agent.created", "heavy-1"],
    ]);
    const own = await held(tenant);
    expect(own.intents).toEqual([]);
    expect(own.records.map((r) => r.agent)).toEqual(["one", "heavy-1"]);
  });

  it("keeps a record its flush could not send, and the alarm sends it once the shard takes writes", async () => {
    const tenant = newTenant();
    // The tenant's audit trail is being moved to another shard: its writes wait until the copy is done.
    await env.DB.prepare(
      "INSERT INTO tenant_shards (tenant, shard, phase, other, updated_at) VALUES (?1, 0, 'copying', 1, ?2)",
    )
      .bind(tenant, new Date().toISOString())
      .run();
    unwrap(await rpc(tenant).putAgent(tenant, agent({ name: "courier" })));
    const failed = await eventually(
      () => inObject(tenant, (audit) => audit.timers.list().find((t) => t.kind === "outbox.flush") ?? null),
      (timer) => (timer?.attempts ?? 0) >= 1,
      { what: "a failed flush, to be tried again" },
    );
    expect(failed!.last_error).toContain("being moved");
    expect((await held(tenant)).pending).toBe(1);
    expect(await inD1(tenant)).toEqual([]);

    // The copy is done; this isolate follows the assignment at once, as a move's own step does.
    await env.DB.prepare("UPDATE tenant_shards SET phase = 'settled', other = NULL WHERE tenant = ?1")
      .bind(tenant)
      .run();
    heldAssignment((await findAssignment(env.DB, tenant))!);
    await inObject(tenant, (_, router) => router.clock.advance(60_000));
    await runDurableObjectAlarm(stub(tenant));
    const records = await recordsInD1(tenant, 1, "the record the alarm sent again");
    expect(records.map((r) => [r.action, r.agent])).toEqual([["agent.created", "courier"]]);
    expect((await held(tenant)).pending).toBe(0);
  });
});

describe("an object made before the audit of its writes", () => {
  it("gains the outbox, the intents and the timers at schema version 3, keeping its history", async () => {
    const tenant = newTenant();
    await runInDurableObject(stub(tenant), (_router, state) => {
      const sql = createSql(state.storage);
      migrate(state.storage, sql, ROUTER_MIGRATIONS.slice(0, 2));
      sql`INSERT INTO route_history (at, session_id, input, agent, method, confidence, registry_version)
          VALUES (1, 'ses_1', 'refund please', 'billing', 'rule', 90, 1)`;
    });
    unwrap(await rpc(tenant).putAgent(tenant, agent({ name: "billing" })));
    const after = await runInDurableObject(stub(tenant), (_router, state) => ({
      version: schemaVersion(createSql(state.storage)),
      history: state.storage.sql.exec("SELECT COUNT(*) AS n FROM route_history").one().n,
    }));
    expect(after).toEqual({ version: 3, history: 1 });
    expect((await recordsInD1(tenant, 1, "the write's record")).map((r) => r.action)).toEqual(["agent.created"]);
  });
});

describe("an intent a crash left", () => {
  /**
   * What a crash between the registry write and its record leaves: the intent and its check
   * timer, written by the object's own code, and — when the write landed — the write in D1.
   */
  async function crashed(tenant: string, definition: AgentDefinition, landed: boolean) {
    const at = await inObject(tenant, (_, router) => router.clock.now());
    const intent = agentWriteIntent(tenant, definition.name, at, null, definitionText(definition));
    await inObject(tenant, (audit) => audit.intend(intent));
    if (landed) await putAgent(env.DB, tenant, definition, null, new Date(at).toISOString());
    return intent;
  }

  it("is recorded by the check timer when its write landed, marked recovered", async () => {
    const tenant = newTenant();
    unwrap(await rpc(tenant).putAgent(tenant, agent({ name: "first" })));
    const intent = await crashed(tenant, agent({ name: "parcels" }), true);
    expect((await held(tenant)).intents).toEqual([intent]);
    await inObject(tenant, (_, router) => router.clock.advance(WRITE_CHECK_AFTER_MS));
    await runDurableObjectAlarm(stub(tenant));
    expect((await held(tenant)).intents).toEqual([]);
    // The record's flush is the alarm's next timer (due on the object's moved clock).
    await runDurableObjectAlarm(stub(tenant));
    const records = await recordsInD1(tenant, 2, "the recovered record in D1");
    expect(records.at(-1)).toMatchObject({
      id: intent.id,
      action: "agent.created",
      agent: "parcels",
      details: { registry_version: 2, recovered: true },
    });
  });

  it("is dropped by the next write when its write never landed, which then records its own", async () => {
    const tenant = newTenant();
    unwrap(await rpc(tenant).putAgent(tenant, agent({ name: "first" })));
    await crashed(tenant, agent({ name: "ghost" }), false);
    expect((await held(tenant)).intents).toHaveLength(1);
    unwrap(await rpc(tenant).putAgent(tenant, agent({ name: "second" })));
    expect((await held(tenant)).intents).toEqual([]);
    const records = await recordsInD1(tenant, 2, "both real writes in D1");
    expect(records.map((r) => [r.action, r.agent])).toEqual([
      ["agent.created", "first"],
      ["agent.created", "second"],
    ]);
    expect((await held(tenant)).records.map((r) => r.agent)).toEqual(["first", "second"]);
  });

  it("is dropped by the check timer when its write never landed", async () => {
    const tenant = newTenant();
    await crashed(tenant, agent({ name: "ghost" }), false);
    await inObject(tenant, (_, router) => router.clock.advance(WRITE_CHECK_AFTER_MS));
    await runDurableObjectAlarm(stub(tenant));
    expect(await held(tenant)).toMatchObject({ intents: [], records: [] });
    expect(await inObject(tenant, (audit) => audit.timers.list())).toEqual([]);
  });
});
