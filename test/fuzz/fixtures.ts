import { env } from "cloudflare:workers";
import { ulid } from "../../src/lib/ulid";
import { MAX_SECRETS_PER_TENANT } from "../../src/schemas/vault";
import { newSessionId } from "../../src/sessions/ids";
import { seal } from "../../src/vault/envelope";
import { vaultKeyring } from "../../src/vault/keyring";
import { BETA_KEY, call } from "../api/helpers";
import { markedValue, signingValue, watch } from "./leaks";

/**
 * What the API fuzz suite aims at: each tenant's vault secrets and the agent and tools that
 * name them, its other agents and tool, sessions (one with a completed handoff) and a
 * collaboration. Alpha's are made afresh for every operation, so an accepted write of one
 * operation's cases cannot steer the next; beta's are made once and must never change, since
 * no case calls with beta's key.
 */

/** Each tenant's vault secrets: one the MCP tool and the webhook agent send, one that signs the agent's calls, one nothing names. */
export const SECRETS = { token: "fz-token", hook: "fz-hook", spare: "fz-spare" } as const;
/**
 * Secrets only beta's vault holds, so to alpha another tenant's secrets' names: one alpha's
 * cases only read and delete, one they also put (alpha's own of that name, beside beta's).
 */
export const BETA_SECRETS = { kept: "fz-beta-kept", shadowed: "fz-beta-shadowed" } as const;
/** Where the fixture MCP tool's server listens (faked by the suite). */
export const MCP_URL = "https://mcp.fuzz.test/mcp";

/** The values, different per tenant and per run: no answer may hold any of them (./leaks.ts). */
const VALUES = {
  alpha: {
    [SECRETS.token]: `Bearer ${markedValue("alpha-token")}`,
    [SECRETS.hook]: signingValue(),
    [SECRETS.spare]: markedValue("alpha-spare"),
  },
  beta: {
    [SECRETS.token]: `Bearer ${markedValue("beta-token")}`,
    [SECRETS.hook]: signingValue(),
    [SECRETS.spare]: markedValue("beta-spare"),
    [BETA_SECRETS.kept]: markedValue("beta-kept"),
    [BETA_SECRETS.shadowed]: markedValue("beta-shadowed"),
  },
};
for (const value of Object.values(VALUES).flatMap((tenant) => Object.values(tenant))) watch.add(value);

/** Definitions naming the vault: so a secret is in use (DELETE meets SECRET_IN_USE) and a refresh sends one. */
export const FIXTURE_MCP_TOOL = {
  name: "fz_mcp",
  description: "An MCP server that wants a token",
  kind: "mcp",
  url: MCP_URL,
  headers: { Authorization: SECRETS.token },
};
export const FIXTURE_HOOKED_AGENT = {
  name: "hooked",
  description: "A webhook agent",
  kind: "webhook",
  endpoint: "https://hooks.fuzz.test/agent",
  signing_secret: SECRETS.hook,
  headers: { Authorization: SECRETS.token },
};

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

/** A fixture's answer: a success, holding no stored value (the suite checks its own answers too). */
function must<T>(res: { status: number; json: T; headers: Headers }, what: string): T {
  if (res.status >= 300) throw new Error(`fixture ${what}: ${res.status} ${JSON.stringify(res.json)}`);
  const leak = watch.find(JSON.stringify(res.json) ?? "", res.headers, "");
  if (leak) throw new Error(`fixture ${what}: the answer holds ${leak}`);
  return res.json;
}

async function tenantFixtures(tenant: "alpha" | "beta"): Promise<TenantFixtures> {
  const key = tenant === "beta" ? BETA_KEY : undefined;
  const opts = key ? { key } : {};
  for (const [name, value] of Object.entries(VALUES[tenant]))
    must(await call("PUT", `/v1/secrets/${name}`, { value }, opts), `secret ${name}`);
  for (const agent of [...FIXTURE_AGENTS, FIXTURE_HOOKED_AGENT])
    must(await call("PUT", `/v1/agents/${agent.name}`, agent, opts), agent.name);
  if (tenant === "beta")
    must(await call("PUT", "/v1/agents/beta-only", { name: "beta-only", description: "b" }, opts), "beta-only");
  for (const tool of [FIXTURE_TOOL, FIXTURE_MCP_TOOL])
    must(await call("PUT", `/v1/tools/${tool.name}`, tool, opts), tool.name);
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

/** Secrets that fill alpha's vault for one operation: their names start so. */
const FILLER = "fz-fill-";

/**
 * Fills alpha's vault to `free` short of its limit (docs/security.md, Limits): the first new
 * names a case puts are taken, the next are VAULT_FULL. The fillers are sealed as the vault
 * seals a value and written in one D1 batch: the rows some 500 PUTs would leave, in 50 ms
 * rather than a second.
 */
async function fillVault(free: number): Promise<void> {
  const held = await env.DB.prepare("SELECT COUNT(*) AS n FROM vault_secrets WHERE tenant = 'alpha'").first<number>(
    "n",
  );
  const names = Array.from({ length: MAX_SECRETS_PER_TENANT - free - (held ?? 0) }, (_, i) => `${FILLER}${i}`);
  const keyring = await vaultKeyring(env.RELAY_VAULT_KEY);
  if (!keyring.ok) throw new Error(keyring.message);
  const at = new Date().toISOString();
  const rows = await Promise.all(
    names.map(async (name) => ({ name, sealed: await seal(keyring.keyring, "alpha", name, markedValue("filler")) })),
  );
  await env.DB.batch(
    rows.map(({ name, sealed }) =>
      env.DB.prepare(
        "INSERT INTO vault_secrets (tenant, name, format, key_id, wrapped_key, ciphertext, created_at) VALUES ('alpha', ?1, 1, ?2, ?3, ?4, ?5)",
      ).bind(name, sealed.key_id, sealed.wrapped_key, sealed.ciphertext, at),
    ),
  );
}

/**
 * Alpha's fixtures afresh (its routing and events configuration cleared, its vault emptied of
 * fillers, its secrets, agents and tools put back; the vault filled to `vaultFree` short of its
 * limit when given), beta's the first time.
 */
export async function freshFixtures({ vaultFree }: { vaultFree?: number } = {}): Promise<Fixtures> {
  must(await call("DELETE", "/v1/config/routing"), "routing reset");
  const events = await call("DELETE", "/v1/config/events");
  if (events.status !== 204 && events.status !== 404) throw new Error(`events reset: ${events.status}`);
  await env.DB.prepare("DELETE FROM vault_secrets WHERE tenant = 'alpha' AND name LIKE ?1").bind(`${FILLER}%`).run();
  beta ??= await tenantFixtures("beta");
  const alpha = await tenantFixtures("alpha");
  if (vaultFree !== undefined) await fillVault(vaultFree);
  return { alpha, beta };
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
  secret: () => `fz-none-${ulid().toLowerCase()}`,
};
