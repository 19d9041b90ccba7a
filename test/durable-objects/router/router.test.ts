import { evictDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { unwrap } from "../../../src/errors";
import { decodeShard, unpackSections } from "../../../src/routing/router-codec";
import type { RouteAgent } from "../../../src/routing/router-image";
import { routerFromShards, wrapShard } from "../../../src/routing/rule-router";
import { routerRpc } from "../../../src/rpc/stubs";
import type { AgentDefinition } from "../../../src/schemas/agent";
import { eventually } from "../../eventually";
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

/** Waits (in turns, a bounded number) until the object holds its own loaded router of `version`. */
async function warmAt(tenant: string, version: number) {
  await eventually(
    async () => unwrap(await rpc(tenant).memory()).version,
    (held) => held === version,
    { what: `the router object holding version ${version}` },
  );
}

/** A route answer as plain data, its agents sorted by name. */
const answered = (routed: { version: number; decision: unknown; agents: Uint8Array }) => ({
  version: routed.version,
  decision: plain(routed.decision),
  agents: agentsIn(routed.agents).sort((a, b) => (a.name < b.name ? -1 : 1)),
});

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

  it("answers from its own loaded router once warm, exactly as from the stored sections", async () => {
    const tenant = newTenant();
    const { agents, words } = synthetic(300);
    await seeded(tenant, agents);
    const { version, router } = await loaded(tenant);
    const asked = inputs(agents, words, 12);
    const needs = [
      { decide: true, threshold: 80 },
      { decide: true, threshold: 0 },
      { decide: false, threshold: 80 },
    ];
    // A restarted object holds no router of its own: its first route is decided from the sections.
    const sliced = [];
    for (const [i, input] of asked.entries()) {
      await evictDurableObject(stub(tenant));
      expect(unwrap(await rpc(tenant).memory())).toEqual({ version: null, memory_bytes: 0 });
      sliced.push(answered(unwrap(await rpc(tenant).route(tenant, input, needs[i % needs.length]!))));
    }
    await warmAt(tenant, version.version);
    expect(unwrap(await rpc(tenant).memory()).memory_bytes).toBeGreaterThan(0);
    for (const [i, input] of asked.entries()) {
      const warm = answered(unwrap(await rpc(tenant).route(tenant, input, needs[i % needs.length]!)));
      expect(warm, input).toEqual(sliced[i]);
      expect(warm.version).toBe(version.version);
      if (needs[i % needs.length]!.decide) expect(warm.decision, input).toEqual(plain(router.decide(input)));
    }
  });

  it("answers a route during a version change from one whole version, never a mix", async () => {
    const tenant = newTenant();
    const { agents } = synthetic(300);
    await seeded(tenant, agents);
    const before = await loaded(tenant);
    await warmAt(tenant, before.version.version);
    const changed = { ...agents[5]!, triggers: { ...agents[5]!.triggers, keywords: ["brandnew", "zapword"] } };
    const input = `brandnew zapword ${agents[9]!.triggers.examples[0]}`;
    const needs = { decide: true, threshold: 100 };
    // What each answer says of the changed agent: the decision, and the agent as listed.
    const answers: { version: number; decision: unknown; keywords: string[] }[] = [];
    const ask = async () => {
      const { version, decision, agents: listed } = answered(unwrap(await rpc(tenant).route(tenant, input, needs)));
      answers.push({ version, decision, keywords: listed.find((a) => a.name === changed.name)!.triggers.keywords });
    };
    let writing = true;
    const write = rpc(tenant)
      .putAgent(tenant, changed)
      .finally(() => {
        writing = false;
      });
    // Routes while the write builds and keeps the next version (a pause between two lets the
    // object's build go on: routes back to back would hold it up).
    let during = 0;
    for (; writing && during < 2000; during++) {
      await ask();
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(during).toBeGreaterThan(0);
    unwrap(await write);
    const after = await loaded(tenant);
    expect(after.version.version).toBe(before.version.version + 1);
    // Routes after the write: from the sections, then from the object's router of the new version.
    for (let i = 0; i < 20; i++) await ask();
    await warmAt(tenant, after.version.version);
    await ask();
    const byVersion = new Map([before, after].map((v) => [v.version.version, v]));
    const decisions = new Map([before, after].map((v) => [v.version.version, plain(v.router.decide(input))]));
    for (const answer of answers) {
      expect(byVersion.has(answer.version)).toBe(true);
      expect(answer.decision).toEqual(decisions.get(answer.version));
      expect(answer.keywords).toEqual(
        answer.version === after.version.version ? changed.triggers.keywords : agents[5]!.triggers.keywords,
      );
    }
    expect((answers.at(-1)!.decision as { candidates: { agent: string }[] }).candidates[0]!.agent).toBe(changed.name);
    expect(answers.at(-1)!.version).toBe(after.version.version);
  });

  it("once warm, lists what the route reads of the agents when the decision is not final", async () => {
    const tenant = newTenant();
    await registered(tenant, team);
    const { version } = await loaded(tenant);
    await warmAt(tenant, version.version);
    const ask = async (list: "every" | "summaries" | "none") =>
      agentsIn(unwrap(await rpc(tenant).route(tenant, "hello there", { decide: true, threshold: 80, list })).agents);
    expect((await ask("every")).map((a) => a.name).sort()).toEqual(team.map((a) => a.name).sort());
    const enabled = team.filter((a) => a.enabled !== false);
    expect((await ask("summaries")).sort((a, b) => (a.name < b.name ? -1 : 1))).toEqual(
      enabled
        .map(({ name, title, description }) => plain({ name, title, description, enabled: true }))
        .sort((a, b) => (a.name < b.name ? -1 : 1)),
    );
    expect(await ask("none")).toEqual([]);
  });
});
