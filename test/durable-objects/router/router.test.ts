import { evictDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { unwrap } from "../../../src/errors";
import { decodeShard, unpackSections } from "../../../src/routing/router-codec";
import type { RouteAgent } from "../../../src/routing/router-image";
import { routerFromShards, wrapShard } from "../../../src/routing/rule-router";
import { routerRpc } from "../../../src/rpc/stubs";
import type { AgentDefinition } from "../../../src/schemas/agent";
import { inputs, synthetic, team } from "../../routing/router-fixtures";

let tenants = 0;
const newTenant = () => `router-${++tenants}`;
const rpc = (tenant: string) => routerRpc(env, tenant);
const stub = (tenant: string) => env.ROUTERS.get(env.ROUTERS.idFromName(tenant));
const plain = (value: unknown) => JSON.parse(JSON.stringify(value));
const agentsIn = (bytes: Uint8Array) => JSON.parse(new TextDecoder().decode(bytes)) as RouteAgent[];

async function registered(tenant: string, agents: readonly AgentDefinition[]) {
  for (const agent of agents) unwrap(await rpc(tenant).putAgent(tenant, agent));
}

/** A registry written straight into D1 (as a restore would): the object builds it when first asked. */
async function seeded(tenant: string, agents: readonly AgentDefinition[], version = 1) {
  await env.DB.batch(
    agents.map((agent) =>
      env.DB.prepare(
        "INSERT INTO agents (tenant, name, definition, created_at, updated_at) VALUES (?1, ?2, ?3, '', '')",
      ).bind(tenant, agent.name, JSON.stringify(agent)),
    ),
  );
  await env.DB.prepare("INSERT INTO registry_versions (tenant, version, stamp) VALUES (?1, ?2, 'seeded')")
    .bind(tenant, version)
    .run();
}

/** The router an isolate loads from the object: every shard, over as many answers as it takes. */
async function loaded(tenant: string) {
  const held = new Map<string, ReturnType<typeof wrapShard>>();
  for (;;) {
    const version = unwrap(await rpc(tenant).load(tenant, [...held.keys()]));
    for (const [k, packed] of version.shards.entries())
      if (packed !== null) held.set(version.stamps[k]!, wrapShard(decodeShard(unpackSections(packed))));
    if (version.stamps.every((s) => held.has(s)))
      return { version, router: routerFromShards(version.stamps.map((s) => held.get(s)!)) };
  }
}

describe("the router object", () => {
  it("answers a route as the router an isolate loads decides it, naming the version", async () => {
    const tenant = newTenant();
    await registered(tenant, team);
    const { version, router } = await loaded(tenant);
    for (const input of inputs(team, ["refund", "error", "pricing"], 20)) {
      const routed = unwrap(await rpc(tenant).route(tenant, input, { decide: true, threshold: 80 }));
      expect(routed.version).toBe(version.version);
      expect(plain(routed.decision), input).toEqual(plain(router.decide(input)));
    }
  });

  it("lists every agent when the decision is not final, and the chosen one only when it is", async () => {
    const tenant = newTenant();
    await registered(tenant, team);
    const unsure = unwrap(await rpc(tenant).route(tenant, "hello there", { decide: true, threshold: 80 }));
    expect(
      agentsIn(unsure.agents)
        .map((a) => a.name)
        .sort(),
    ).toEqual(team.map((a) => a.name).sort());
    const sure = unwrap(
      await rpc(tenant).route(tenant, "I want a refund for my order", { decide: true, threshold: 0 }),
    );
    expect(sure.decision?.agent).toBe("billing");
    expect(agentsIn(sure.agents).map((a) => a.name)).toEqual(["billing"]);
    // The LLM strategy asks no decision, and every agent.
    const llm = unwrap(await rpc(tenant).route(tenant, "anything", { decide: false, threshold: 80 }));
    expect(llm.decision).toBeNull();
    expect(agentsIn(llm.agents)).toHaveLength(team.length);
  });

  it("after a restart, answers from the version it kept, without building it again", async () => {
    const tenant = newTenant();
    const { agents } = synthetic(300);
    await seeded(tenant, agents);
    const before = await loaded(tenant);
    expect(before.version.stamps).toHaveLength(2);
    await evictDurableObject(stub(tenant));
    const input = `${agents[7]!.triggers.examples[0]} tk7-1234`;
    const routed = unwrap(await rpc(tenant).route(tenant, input, { decide: true, threshold: 80 }));
    expect(plain(routed.decision)).toEqual(plain(before.router.decide(input)));
    // The same version, as the last build left it: nothing was compiled or linked since.
    const after = unwrap(await rpc(tenant).load(tenant, before.version.stamps));
    expect(after.stamps).toEqual(before.version.stamps);
    expect(after.build).toEqual(before.version.build);
    expect(after.shards.every((s) => s === null)).toBe(true);
  });

  it("builds the version first when it keeps none (a registry written straight into D1)", async () => {
    const tenant = newTenant();
    await seeded(tenant, team, 3);
    const routed = unwrap(
      await rpc(tenant).route(tenant, "I want a refund for my order", { decide: true, threshold: 80 }),
    );
    expect(routed.version).toBe(3);
    expect(routed.decision?.candidates[0]?.agent).toBe("billing");
  });

  it("compiles a changed agent's part alone and relinks its shard alone", async () => {
    const tenant = newTenant();
    const { agents } = synthetic(300);
    await seeded(tenant, agents);
    const first = await loaded(tenant);
    const changed = { ...agents[5]!, triggers: { ...agents[5]!.triggers, keywords: ["brandnew"] } };
    unwrap(await rpc(tenant).putAgent(tenant, changed));
    const { version } = await loaded(tenant);
    expect(version.build.compiled_count).toBe(1);
    expect(version.build.compiled.map((c) => c.agent)).toEqual([changed.name]);
    expect(version.build.linked_shards).toBe(1);
    expect(version.stamps.filter((s, k) => s !== first.version.stamps[k])).toHaveLength(1);
    const routed = unwrap(await rpc(tenant).route(tenant, "brandnew", { decide: true, threshold: 0 }));
    expect(routed.decision?.candidates[0]?.agent).toBe(changed.name);
  });
});
