import type * as z from "zod";
import type { ErrorCode } from "../../errors/codes";

/**
 * The shape of one entry of the operation table (./operations.ts): what a route takes, what
 * it answers, which error codes it may answer with, and the tags that group routes in
 * /openapi.json. Apart from the table so that parts of it can live in files of their own.
 */

export type Method = "get" | "post" | "put" | "patch" | "delete";

export interface Answer {
  description: string;
  /** The JSON body; absent for a body-less answer (204, 101). */
  schema?: z.ZodType;
  /** What the answer is as Server-Sent Events, for a route that also streams (`Accept: text/event-stream`). */
  stream?: string;
  /** The JSON one frame's `data:` holds, when the stream's frames have a schema (the live events). */
  frames?: z.ZodType;
  /** Another media type the same JSON comes in when the client accepts it (A2A's own). */
  alsoAs?: "application/a2a+json";
}

export interface Operation {
  method: Method;
  /** OpenAPI form: `/v1/agents/{name}`. */
  path: string;
  tag: Tag;
  summary: string;
  description?: string;
  /** False for the routes that need no API key; "operator" for those that need the operator's key. */
  auth?: boolean | "operator";
  params?: Record<string, z.ZodType>;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** The body may be left out (its schema's defaults apply). */
  bodyOptional?: boolean;
  /** Request media types besides JSON (an agent as Markdown). */
  bodyMedia?: "text/markdown";
  /** Another media type the same JSON body may be sent as (A2A's own). */
  bodyAlsoAs?: "application/a2a+json";
  headers?: Record<string, { schema: z.ZodType; required?: boolean; description: string }>;
  answers: Record<number, Answer>;
  /** Error codes this route may answer with (each code's status is fixed: src/errors/codes.ts). */
  errors: ErrorCode[];
}

export const TAGS = {
  system: "Health and the API's own description.",
  agents: "The agent registry: definitions, blocking status and handoff history.",
  tools: "The tool registry agents call from their turns.",
  secrets: "The tenant's vault: secrets its agents and tools name, stored sealed, never shown again.",
  routing: "Which agent should take an input: dry runs, statistics and configuration.",
  sessions: "Conversations, each in its own Durable Object: messages, runs, state, traces, audit.",
  handoffs: "Moving a session from one agent to another.",
  inbox: "What waits for a person: human turns, escalations and approvals.",
  collaborations: "Agents talking to each other: messages, queries, negotiation, escalation.",
  audit: "The tenant's audit trail in D1.",
  usage: "What the tenant used, hour by hour, and its quotas (docs/operations.md, Quotas and Usage).",
  operator:
    "The operator's routes, with RELAY_OPERATOR_KEY and never a tenant's key: quotas and usage of every tenant.",
  webhooks:
    "Signed deliveries from other systems; where Relay sends its own, the secret that signs them, and which addresses it calls.",
  a2a: "Relay's agents as A2A 1.0 agents (JSON-RPC binding), and the tenant's front door that routes (docs/a2a.md).",
  telemetry:
    "OpenTelemetry: where the tenant's run spans are exported (OTLP/HTTP), and what the export did (docs/observability.md, Export).",
  mcp: "Relay as an MCP server: a team's routing, runs, handoffs and inbox as MCP tools and resources (docs/mcp-server.md).",
} as const;
export type Tag = keyof typeof TAGS;
