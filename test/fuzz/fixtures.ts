import { ulid } from "../../src/lib/ulid";
import { newSessionId } from "../../src/sessions/ids";
import { BETA_KEY, call } from "../api/helpers";

/**
 * What the API fuzz suite aims at: each tenant's agents, a tool, sessions (one with a
 * completed handoff) and a collaboration. Alpha's are made afresh for every operation, so an
 * accepted write of one operation's cases cannot steer the next; beta's are made once and must
 * never change, since no case calls with beta's key.
 */

export const FIXTURE_AGENTS = [
  {
    name: "sup",
    description: "Supervisor: plans and hands work on",
    handoffs: [
      "w1",
      { to: "w2", condition: "tier == 'gold'" },
      { to: "w3", when: "auto", trigger: { type: "event", event: "escalate" } },
    ],
    capabilities: [{ name: "planning" }],
  },
  {
    name: "w1",
    description: "Weather",
    triggers: { keywords: ["weather", "rain"] },
    capabilities: [{ name: "weather" }],
  },
  { name: "w2", description: "Refunds", triggers: { keywords: ["refund", "invoice"] } },
  { name: "w3", description: "Operations", max_concurrent_sessions: 5 },
];

export const FIXTURE_TOOL = { name: "lookup", description: "Looks things up", kind: "client" };

export interface TenantFixtures {
  /** A session held by `sup`, with a state and a message. */
  session: string;
  /** A session whose handoff to `w1` completed. */
  session2: string;
  handoff: string;
  run: string | null;
  collaboration: string;
}

export interface Fixtures {
  alpha: TenantFixtures;
  beta: TenantFixtures;
}

/** Every session id a 201 answered, per tenant: the tenant's session index must hold no other. */
export const createdSessions = { alpha: new Set<string>(), beta: new Set<string>() };

function must<T>(res: { status: number; json: T }, what: string): T {
  if (res.status >= 300) throw new Error(`fixture ${what}: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

async function tenantFixtures(tenant: "alpha" | "beta"): Promise<TenantFixtures> {
  const key = tenant === "beta" ? BETA_KEY : undefined;
  const opts = key ? { key } : {};
  for (const agent of FIXTURE_AGENTS) must(await call("PUT", `/v1/agents/${agent.name}`, agent, opts), agent.name);
  if (tenant === "beta")
    must(await call("PUT", "/v1/agents/beta-only", { name: "beta-only", description: "b" }, opts), "beta-only");
  must(await call("PUT", `/v1/tools/${FIXTURE_TOOL.name}`, FIXTURE_TOOL, opts), "tool");
  const session = must(await call("POST", "/v1/sessions", { agent: "sup" }, opts), "session") as { id: string };
  createdSessions[tenant].add(session.id);
  must(await call("PATCH", `/v1/sessions/${session.id}/state`, { set: { tier: "gold", n: 1 } }, opts), "state");
  const sent = must(
    await call("POST", `/v1/sessions/${session.id}/messages`, { role: "user", content: "hello there" }, opts),
    "message",
  ) as { run?: { id: string } };
  const session2 = must(await call("POST", "/v1/sessions", { agent: "sup" }, opts), "session2") as { id: string };
  createdSessions[tenant].add(session2.id);
  const handoff = must(
    await call(
      "POST",
      "/v1/handoffs",
      { session_id: session2.id, source_agent: "sup", target_agent: "w1", reason: "fixture" },
      opts,
    ),
    "handoff",
  ) as { id: string };
  const collaboration = must(
    await call("POST", "/v1/collaborations", { initiator: "sup", participants: ["w1", "w2"] }, opts),
    "collaboration",
  ) as { id: string };
  return {
    session: session.id,
    session2: session2.id,
    handoff: handoff.id,
    run: sent.run?.id ?? null,
    collaboration: collaboration.id,
  };
}

let beta: TenantFixtures | undefined;

/**
 * Alpha's fixtures afresh (its routing and events configuration cleared, its agents and tool
 * put back), beta's the first time.
 */
export async function freshFixtures(): Promise<Fixtures> {
  must(await call("DELETE", "/v1/config/routing"), "routing reset");
  const events = await call("DELETE", "/v1/config/events");
  if (events.status !== 204 && events.status !== 404) throw new Error(`events reset: ${events.status}`);
  beta ??= await tenantFixtures("beta");
  return { alpha: await tenantFixtures("alpha"), beta };
}

/** Ids of the right shape that name nothing (in `session`, when given: a real session's, or a made-up one). */
export const nothing = {
  session: () => newSessionId(),
  handoff: (session = newSessionId()) => `hof_${ulid().toLowerCase()}_${session}`,
  inbox: (session = newSessionId()) => `inb_${ulid().toLowerCase()}_${session}`,
  run: (session = newSessionId()) => `run_${ulid().toLowerCase()}_${session}`,
  collaboration: () => `col_${ulid().toLowerCase()}`,
  fanout: () => `fan_${ulid().toLowerCase()}`,
  message: () => `cmsg_${ulid().toLowerCase()}`,
};
