import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-env";
import { backgroundOf } from "../auth/middleware";
import { RelayError, unwrap } from "../errors";
import { functionTool, offeredTools } from "../interop/mcp";
import { listMcpTools } from "../outbound/mcp-tool";
import { countRefusal, quotaExceeded } from "../quotas/admission";
import { bumpVersion } from "../registry/store";
import { deleteTool, getTool, listTools, putTool, toolCount } from "../registry/tool-store";
import { tenantRpc } from "../rpc/stubs";
import type { McpToolListing } from "../schemas/tool";
import { ToolDefinition, ToolName } from "../schemas/tool";
import { assertEndpointAllowed, mcpOutbound, outboundPolicy } from "../services/outbound";
import { invalidateTenant } from "../services/registry-cache";
import { assertSecretsKnown } from "../services/secret-references";
import { countRefused } from "../services/usage-meter";
import { decodeCursor, listPage, pagingQuery } from "./cursor";
import { ToolPosition } from "./positions";
import { parseWith, readJson, readQuery } from "./validate";

/** `/v1/tools`: the tenant's tool registry. Agents name the tools they may call in `tools.allow`. */

export const ToolListQuery = z.strictObject(pagingQuery(200, 50));

const missing = (name: string) => new RelayError("TOOL_NOT_FOUND", `No tool named '${name}'.`, { tool: name });

export const tools = new Hono<AppEnv>()
  .put("/:name", async (c) => {
    const name = parseWith(ToolName, c.req.param("name"), "tool name");
    const definition = await readJson(c, ToolDefinition);
    if (definition.name !== name) {
      throw new RelayError("VALIDATION_FAILED", `Body names tool '${definition.name}' but the URL names '${name}'.`, {
        issues: [{ path: "name", message: "must equal the name in the URL" }],
      });
    }
    assertEndpointAllowed(outboundPolicy(c.env, c.req.url), definition.url, "url");
    await assertSecretsKnown(c.env, c.get("tenant"), definition);
    // A new tool counts against the tenant's tools quota (read now: an override applies at once).
    const tenant = c.get("tenant");
    const { limits } = unwrap(await tenantRpc(c.env, tenant).limits(tenant));
    const written = await putTool(c.env.DB, tenant, definition, limits.tools);
    if (!written) {
      countRefused(c.env, tenant, "tools", backgroundOf(c));
      throw RelayError.fromBody(quotaExceeded(countRefusal("tools", limits.tools!, await toolCount(c.env.DB, tenant))));
    }
    const { created, tool } = written;
    invalidateTenant(tenant);
    return c.json(tool, created ? 201 : 200);
  })
  .get("/", async (c) => {
    const { limit, cursor } = readQuery(c, ToolListQuery);
    const page = await listTools(c.env.DB, c.get("tenant"), {
      limit,
      after: decodeCursor(cursor, ToolPosition),
    });
    return c.json(listPage(page.tools, page.next));
  })
  .get("/:name", async (c) => {
    const name = parseWith(ToolName, c.req.param("name"), "tool name");
    const tool = await getTool(c.env.DB, c.get("tenant"), name);
    if (!tool) throw missing(name);
    return c.json(tool);
  })
  // An MCP server's tools, listed now; the registry version moves, so every isolate lists them again.
  .post("/:name/refresh", async (c) => {
    const name = parseWith(ToolName, c.req.param("name"), "tool name");
    const stored = await getTool(c.env.DB, c.get("tenant"), name);
    if (!stored) throw missing(name);
    const server = stored.definition;
    if (server.kind !== "mcp")
      throw new RelayError("VALIDATION_FAILED", `'${name}' is an ${server.kind} tool; only an mcp tool lists tools.`, {
        issues: [{ path: "kind", message: "must be mcp" }],
      });
    const listed = await listMcpTools(server, await mcpOutbound(c.env, c.get("tenant"), server, c.req.url));
    if (!listed.ok) throw new RelayError(listed.code, listed.message, { tool: name });
    await bumpVersion(c.env.DB, c.get("tenant")).run();
    invalidateTenant(c.get("tenant"));
    const body: McpToolListing = {
      tool: name,
      tools: offeredTools(server, listed.tools).map((t) => ({
        name: functionTool(server, t).name,
        mcp_name: t.name,
        description: t.description ?? "",
      })),
    };
    return c.json(body);
  })
  .delete("/:name", async (c) => {
    const name = parseWith(ToolName, c.req.param("name"), "tool name");
    const deleted = await deleteTool(c.env.DB, c.get("tenant"), name);
    invalidateTenant(c.get("tenant"));
    if (!deleted) throw missing(name);
    return c.body(null, 204);
  });
