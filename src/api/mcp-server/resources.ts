import {
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
} from "@modelcontextprotocol/server";
import { querySessions } from "../../audit/session-index";
import { RelayError } from "../../errors";
import { agentDirectory } from "../../services/registry-cache";
import { readDatabase } from "../../services/tenant-shards";
import type { McpContext } from "./context";
import { isExposed } from "./expose";
import { errorBodyOf } from "./results";
import { TRANSCRIPT_LIMIT, transcript } from "./sessions";

/**
 * The resources (docs/mcp-server.md, Resources): each exposed agent's definition at
 * `relay://agents/{name}`, and a session's transcript at `relay://sessions/{id}/transcript`.
 * Both are templates; `resources/list` lists the exposed agents and the tenant's newest sessions.
 */

export const agentUri = (name: string) => `relay://agents/${name}`;
export const transcriptUri = (id: string) => `relay://sessions/${id}/transcript`;

/** Sessions `resources/list` names: the newest, from the D1 sessions index. */
const LISTED_SESSIONS = 50;

/** Relay codes that mean the resource is not there. */
const NOT_THERE = new Set(["AGENT_NOT_FOUND", "SESSION_NOT_FOUND", "SESSION_EXPIRED"]);

/**
 * A resource read's failure as MCP says it (a read has no tool-style error result): not
 * there is the SDK's resource-not-found; anything else an internal error. Either way the
 * message leads with Relay's code, and `data.relay` is its error body.
 */
function readFailure(uri: URL, error: unknown): Error {
  const body = errorBodyOf(error);
  const message = `${body.code}: ${body.message}`;
  if (NOT_THERE.has(body.code)) return new ResourceNotFoundError(uri.href, message);
  return new ProtocolError(ProtocolErrorCode.InternalError, message, { uri: uri.href, relay: body });
}

const json = (uri: URL, value: unknown) => ({
  contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(value) }],
});

/** Registers both resource templates on `server`. */
export function registerResources(server: McpServer, ctx: McpContext): void {
  server.registerResource(
    "agent",
    new ResourceTemplate("relay://agents/{name}", {
      list: async () => {
        const { agents } = await agentDirectory(ctx.env.DB, ctx.tenant);
        return {
          resources: agents
            .filter((a) => isExposed(ctx.exposure, a.name))
            .map((a) => ({
              uri: agentUri(a.name),
              name: a.name,
              title: a.title ?? a.name,
              description: a.description,
              mimeType: "application/json",
            })),
        };
      },
    }),
    {
      title: "Agent definition",
      description: "An agent's definition, as GET /v1/agents/{name} shows it.",
      mimeType: "application/json",
    },
    async (uri, { name }) => {
      try {
        const agent = typeof name === "string" ? name : "";
        const definition = (await agentDirectory(ctx.env.DB, ctx.tenant)).byName.get(agent);
        // An agent the tenant does not expose reads as one that is not there.
        if (!definition || !isExposed(ctx.exposure, agent))
          throw new RelayError("AGENT_NOT_FOUND", `No agent named '${agent}'.`, { agent });
        return json(uri, definition);
      } catch (error) {
        throw readFailure(uri, error);
      }
    },
  );

  server.registerResource(
    "transcript",
    new ResourceTemplate("relay://sessions/{id}/transcript", {
      list: async () => {
        const db = await readDatabase(ctx.env, ctx.tenant);
        const { sessions } = await querySessions(db, ctx.tenant, { status: "active", limit: LISTED_SESSIONS });
        return {
          resources: sessions.map((s) => ({
            uri: transcriptUri(s.id),
            name: `${s.id} transcript`,
            description: `The conversation with ${s.current_agent}, ${s.message_count} messages.`,
            mimeType: "application/json",
          })),
        };
      },
    }),
    {
      title: "Session transcript",
      description: `A session's messages, oldest first (at most ${TRANSCRIPT_LIMIT}), as GET /v1/sessions/{id}/messages gives them.`,
      mimeType: "application/json",
    },
    async (uri, { id }) => {
      try {
        const session = typeof id === "string" ? id : "";
        return json(uri, { session_id: session, items: await transcript(ctx, session) });
      } catch (error) {
        throw readFailure(uri, error);
      }
    },
  );
}
