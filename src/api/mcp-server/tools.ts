import type { McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import { RelayError } from "../../errors";
import { AgentName } from "../../schemas/agent";
import { ContentText } from "../../schemas/handoff";
import { MAX_INPUT_BYTES, RoutingStrategy } from "../../schemas/routing";
import { MAX_TTL_S, MIN_TTL_S } from "../../schemas/session";
import { agentDirectory } from "../../services/registry-cache";
import type { McpContext } from "./context";
import { isExposed } from "./expose";
import { agentUri } from "./resources";
import { toolValue } from "./results";
import { runAnswer } from "./run-answer";
import { exposedRoute, latestRun, readSession, startSession } from "./sessions";
import { advertised, checked } from "./tool-input";

/**
 * The tools that read the team and open conversations (docs/mcp-server.md, Tools): `route`,
 * `list_agents`, `start_session`, `get_session`. The run tools are in ./run-tools.ts.
 */

export const RouteArgs = z.strictObject({
  input: z.string().min(1).describe("What the user asked; routed as POST /v1/route routes it."),
  strategy: RoutingStrategy.optional().describe("rule, llm or hybrid; the tenant's configured strategy when left out."),
});

export const ListAgentsArgs = z.strictObject({
  limit: z.number().int().min(1).max(200).default(100),
  cursor: AgentName.optional().describe("The last agent name of the previous page."),
});

export const StartSessionArgs = z.strictObject({
  agent: AgentName.optional().describe("The agent to start with; the router picks one from input when left out."),
  input: ContentText.pipe(z.string().min(1))
    .optional()
    .describe("The first user message: routed when no agent is named, and stored (send_message runs agents)."),
  metadata: z.record(z.string(), z.unknown()).optional(),
  ttl_s: z.number().int().min(MIN_TTL_S).max(MAX_TTL_S).optional().describe("Idle time before the session expires."),
});

export const GetSessionArgs = z.strictObject({ session_id: z.string().min(1).max(200) });

/** The agent as list_agents shows it: who it is, what it does and who it hands off to. */
function listed(agent: {
  name: string;
  title?: string | undefined;
  description: string;
  kind: string;
  enabled: boolean;
  capabilities: { name: string }[];
  handoffs: { to: string }[];
}) {
  return {
    name: agent.name,
    title: agent.title ?? agent.name,
    description: agent.description,
    kind: agent.kind,
    enabled: agent.enabled,
    capabilities: agent.capabilities.map((c) => c.name),
    handoffs: agent.handoffs.map((h) => h.to),
    uri: agentUri(agent.name),
  };
}

/** Registers the team and session tools on `server`. */
export function registerTeamTools(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    "route",
    {
      title: "Route (dry run)",
      description: "Which agent of the team would take this input, how sure the router is, and why. Changes nothing.",
      inputSchema: advertised(RouteArgs),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    checked(RouteArgs, async ({ input, strategy }) => {
      const bytes = new TextEncoder().encode(input).byteLength;
      if (bytes > MAX_INPUT_BYTES)
        throw new RelayError("PAYLOAD_TOO_LARGE", `input is ${bytes} bytes; the limit is ${MAX_INPUT_BYTES}.`, {
          limit_bytes: MAX_INPUT_BYTES,
          input_bytes: bytes,
        });
      const { decision } = await exposedRoute(ctx, input, strategy ? { strategy } : {});
      return toolValue(decision);
    }),
  );

  server.registerTool(
    "list_agents",
    {
      title: "List agents",
      description: "The team's agents in name order: what each does, its capabilities and who it hands off to.",
      inputSchema: advertised(ListAgentsArgs),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    checked(ListAgentsArgs, async ({ limit, cursor }) => {
      const { agents } = await agentDirectory(ctx.env.DB, ctx.tenant);
      const shown = agents.filter((a) => isExposed(ctx.exposure, a.name) && (cursor === undefined || a.name > cursor));
      const page = shown.slice(0, limit);
      const next = shown.length > limit ? (page.at(-1)?.name ?? null) : null;
      return toolValue({ agents: page.map(listed), next_cursor: next });
    }),
  );

  server.registerTool(
    "start_session",
    {
      title: "Start a session",
      description:
        "A new conversation with the agent named, or the router's pick for the input. Runs nothing: send_message runs the agent.",
      inputSchema: advertised(StartSessionArgs),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    checked(StartSessionArgs, async (args) => {
      const { view, route } = await startSession(ctx, { ...args, store: true }, false);
      return toolValue({ session: view, ...(route ? { route } : {}) });
    }),
  );

  server.registerTool(
    "get_session",
    {
      title: "Get a session",
      description:
        "The session's current agent, handoff stack and state, and its latest run as send_message answers it.",
      inputSchema: advertised(GetSessionArgs),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    checked(GetSessionArgs, async ({ session_id }) => {
      const session = await readSession(ctx, session_id);
      const run = await latestRun(ctx, session_id);
      return toolValue({ session, latest_run: run ? runAnswer(run) : null });
    }),
  );
}
