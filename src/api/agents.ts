import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-env";
import { backgroundOf } from "../auth/middleware";
import { RelayError, unwrap } from "../errors";
import { parseAgentFile } from "../registry/agent-file";
import { checkAgent } from "../registry/check-agent";
import { getAgent, listAgents } from "../registry/store";
import { agentRpc, routerRpc, tenantRpc } from "../rpc/stubs";
import { AgentDefinition, AgentName } from "../schemas/agent";
import { agentLoad } from "../services/agent-capacity";
import { assertEndpointAllowed, outboundPolicy } from "../services/outbound";
import { refreshRouter } from "../services/registry-cache";
import { assertSecretsKnown } from "../services/secret-references";
import { countRefused } from "../services/usage-meter";
import { decodeCursor, listPage, pagingQuery } from "./cursor";
import { AgentPosition } from "./positions";
import { parseWith, readJson, readQuery, readText } from "./validate";

/** Agent documents can be large (2,000 examples); 4 MiB leaves room for all limits at once. */
const AGENT_BODY_LIMIT = 4 * 1024 * 1024;

export const AgentListQuery = z.strictObject(pagingQuery(200, 50));

function agentName(raw: string): string {
  return parseWith(AgentName, raw, "agent name");
}

export const agents = new Hono<AppEnv>()
  .put("/:name", async (c) => {
    const name = agentName(c.req.param("name"));
    const isMarkdown = (c.req.header("Content-Type") ?? "").startsWith("text/markdown");
    const definition = isMarkdown
      ? parseAgentFile(await readText(c, AGENT_BODY_LIMIT), `${name}.md`)
      : await readJson(c, AgentDefinition, AGENT_BODY_LIMIT);
    if (definition.name !== name) {
      throw new RelayError("VALIDATION_FAILED", `Body names agent '${definition.name}' but the URL names '${name}'.`, {
        issues: [{ path: "name", message: "must equal the name in the URL" }],
      });
    }
    checkAgent(definition);
    const policy = outboundPolicy(c.env, c.req.url);
    assertEndpointAllowed(policy, definition.endpoint, "endpoint");
    assertEndpointAllowed(policy, definition.card_url, "card_url");
    await assertSecretsKnown(c.env, c.get("tenant"), definition);
    // The tenant's router object admits it against the pattern budget, writes it and builds
    // the next router version; this isolate then loads that version (read your writes).
    // ...and, when it is new, against the tenant's agents quota (read now: an override applies at once).
    const tenant = c.get("tenant");
    const { limits } = unwrap(await tenantRpc(c.env, tenant).limits(tenant));
    const written = await routerRpc(c.env, tenant).putAgent(tenant, definition, limits.agents);
    if (!written.ok && written.error.code === "QUOTA_EXCEEDED") countRefused(c.env, tenant, "agents", backgroundOf(c));
    const { created, agent } = unwrap(written);
    await refreshRouter(c.env, tenant);
    return c.json(agent, created ? 201 : 200);
  })
  .get("/", async (c) => {
    const { limit, cursor } = readQuery(c, AgentListQuery);
    const page = await listAgents(c.env.DB, c.get("tenant"), {
      limit,
      after: decodeCursor(cursor, AgentPosition),
    });
    return c.json(listPage(page.agents, page.next));
  })
  .get("/:name", async (c) => {
    const name = agentName(c.req.param("name"));
    const agent = await getAgent(c.env.DB, c.get("tenant"), name);
    if (!agent) throw new RelayError("AGENT_NOT_FOUND", `No agent named '${name}'.`, { agent: name });
    return c.json(agent);
  })
  // The agent's blocking status (docs/collaboration.md): none, or what it waits for.
  .get("/:name/blocking", async (c) => {
    const name = agentName(c.req.param("name"));
    if (!(await getAgent(c.env.DB, c.get("tenant"), name)))
      throw new RelayError("AGENT_NOT_FOUND", `No agent named '${name}'.`, { agent: name });
    const status = await agentRpc(c.env, c.get("tenant"), name).blocking();
    if (!status.ok) throw RelayError.fromBody(status.error);
    return c.json(status.value);
  })
  // Capacity and leases: over every shard of a hot agent (src/services/agent-capacity.ts).
  .get("/:name/load", async (c) => {
    const name = agentName(c.req.param("name"));
    const agent = await getAgent(c.env.DB, c.get("tenant"), name);
    if (!agent) throw new RelayError("AGENT_NOT_FOUND", `No agent named '${name}'.`, { agent: name });
    const load = await agentLoad(c.env, c.get("tenant"), name, agent.definition.max_concurrent_sessions ?? null);
    if (!load.ok) throw RelayError.fromBody(load.error);
    return c.json(load.value);
  })
  .delete("/:name", async (c) => {
    const name = agentName(c.req.param("name"));
    const { deleted } = unwrap(await routerRpc(c.env, c.get("tenant")).deleteAgent(c.get("tenant"), name));
    await refreshRouter(c.env, c.get("tenant"));
    if (!deleted) {
      throw new RelayError("AGENT_NOT_FOUND", `No agent named '${name}'.`, { agent: name });
    }
    return c.body(null, 204);
  });
