import * as z from "zod";
import { Signing } from "./agent";
import { SecretHeaders, SecretName } from "./vault";

/**
 * Tools (docs/runs.md, Tools): a tenant's registry of functions its agents may call, next to
 * its agents. An agent is offered the registry tools its `tools.allow` names. Three kinds:
 * `http` — Relay POSTs the call to the tool's URL (Standard Webhooks-signed) and feeds the
 * reply back to the model; `client` — the run pauses (`requires_action`) until the API
 * client posts the outputs; `mcp` — an MCP tool server (Streamable HTTP) whose tools Relay
 * lists and calls (docs/mcp.md).
 */

/** Names Relay's own tools use; a registry tool may not shadow them. */
const RESERVED = /^(transfer_to_|return_to_|(escalate_to_human|ask_agent|notify_agent|broadcast|fan_out)$)/;

export const ToolName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1–64 letters, digits, '_' or '-' (the OpenAI tool-name rule)")
  .refine(
    (name) => !RESERVED.test(name),
    "transfer_to_*, return_to_*, escalate_to_human, ask_agent, notify_agent, broadcast and fan_out are Relay's own tools",
  );
export type ToolName = z.infer<typeof ToolName>;

export const TOOL_KINDS = ["http", "client", "mcp"] as const;
export const ToolKind = z.enum(TOOL_KINDS);
export type ToolKind = z.infer<typeof ToolKind>;

/** The most of an http tool's reply Relay reads, and the default cap. */
export const MAX_TOOL_RESPONSE_BYTES = 1024 * 1024;
export const DEFAULT_TOOL_RESPONSE_BYTES = 64 * 1024;

const EMPTY_PARAMETERS = { type: "object", properties: {} };

export const ToolDefinition = z
  .strictObject({
    name: ToolName,
    description: z.string().max(4000).default(""),
    kind: ToolKind,
    /** JSON Schema of the call's arguments (an object schema, as Chat Completions requires); calls are validated against it. */
    parameters: z
      .record(z.string(), z.unknown())
      .refine((schema) => schema.type === "object", "must be a JSON Schema with type: object")
      .default(EMPTY_PARAMETERS),
    /**
     * `http` tools: where the call is POSTed; `mcp` tools: the server's Streamable HTTP endpoint.
     * Relay's outbound address policy applies (docs/security.md).
     */
    url: z.url({ protocol: /^https?$/ }).optional(),
    /**
     * `http` and `mcp` tools: headers sent with every call, each taking its value from the
     * tenant's vault secret named (`{ "Authorization": "github-token" }`: docs/security.md).
     */
    headers: SecretHeaders.optional(),
    /** `mcp` tools: which of the server's tools agents may be offered (absent: all of them). */
    tools: z.array(z.string().min(1).max(128)).max(200).optional(),
    /** `http` tools: how calls are signed (see Signing); absent: signed. */
    signing: Signing.optional(),
    /**
     * `http` tools: the vault secret that signs calls (a Standard Webhooks secret, `whsec_…`;
     * several, comma-separated, while rotating). Absent: the tenant's signing secret.
     */
    signing_secret: SecretName.optional(),
    /** `http` tools: the deadline of one call, connection to last byte. */
    timeout_s: z.number().int().min(1).max(60).default(10),
    /** `http` tools: replies longer than this fail the call unread. */
    max_response_bytes: z.number().int().min(1).max(MAX_TOOL_RESPONSE_BYTES).default(DEFAULT_TOOL_RESPONSE_BYTES),
  })
  .superRefine((tool, ctx) => {
    if ((tool.kind === "http" || tool.kind === "mcp") && !tool.url)
      ctx.addIssue({ code: "custom", path: ["url"], message: `an ${tool.kind} tool needs a url` });
    if (tool.kind === "client" && tool.headers)
      ctx.addIssue({
        code: "custom",
        path: ["headers"],
        message: "a client tool is not called by Relay; it sends no headers",
      });
    if (tool.kind !== "http" && tool.signing_secret)
      ctx.addIssue({ code: "custom", path: ["signing_secret"], message: "only an http tool is signed" });
    if (tool.signing === "none" && tool.signing_secret)
      ctx.addIssue({
        code: "custom",
        path: ["signing_secret"],
        message: "a tool with signing: none has no signing secret",
      });
    if (tool.kind !== "mcp" && tool.tools)
      ctx.addIssue({ code: "custom", path: ["tools"], message: "only an mcp tool lists its server's tools" });
    if (tool.kind === "mcp" && tool.signing)
      ctx.addIssue({
        code: "custom",
        path: ["signing"],
        message: "an mcp tool authenticates with headers from the vault; it is not signed",
      });
    if (tool.kind === "client" && tool.url)
      ctx.addIssue({ code: "custom", path: ["url"], message: "a client tool runs in the API client; it has no url" });
    if (tool.kind === "client" && tool.signing)
      ctx.addIssue({
        code: "custom",
        path: ["signing"],
        message: "a client tool is not called by Relay; nothing is signed",
      });
  });
export type ToolDefinition = z.infer<typeof ToolDefinition>;
export type ToolDefinitionInput = z.input<typeof ToolDefinition>;

/** A tool as the API returns it. */
export const StoredTool = z.object({
  definition: ToolDefinition,
  created_at: z.string(),
  updated_at: z.string(),
});
export type StoredTool = z.infer<typeof StoredTool>;

/** `POST /v1/tools/:name/refresh`: an MCP server's tools as agents are offered them, listed now. */
export const McpToolListing = z.object({
  tool: z.string(),
  tools: z.array(
    z.object({
      /** What a model calls it, and what `tools.allow` may name: `<server>__<tool>` (docs/mcp.md). */
      name: z.string(),
      /** The server's own name for it. */
      mcp_name: z.string(),
      description: z.string(),
    }),
  ),
});
export type McpToolListing = z.infer<typeof McpToolListing>;
