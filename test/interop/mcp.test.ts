import { describe, expect, it } from "vitest";
import { callOutput, expandMcpTools, mcpFunctionName, mcpServersOf } from "../../src/interop/mcp";
import { AgentDefinition } from "../../src/schemas/agent";
import { ToolDefinition } from "../../src/schemas/tool";

/** MCP servers as Relay tools (docs/mcp.md): names, which servers an agent reaches, its expanded tools. */

const registry = new Map(
  [
    ToolDefinition.parse({ name: "gh", kind: "mcp", url: "https://mcp.test/gh" }),
    ToolDefinition.parse({ name: "crm", kind: "mcp", url: "https://mcp.test/crm", tools: ["find"] }),
    ToolDefinition.parse({ name: "lookup", kind: "http", url: "https://t.test/l" }),
    ToolDefinition.parse({ name: "gh__create_issue", kind: "client" }),
  ].map((t) => [t.name, t]),
);
const listed = (...names: string[]) =>
  names.map((name) => ({ name, description: `${name}!`, inputSchema: { type: "object" } }));

describe("mcpFunctionName", () => {
  it.each([
    ["gh", "create_issue", "gh__create_issue"],
    ["gh", "repo.search", "gh__repo_search"],
    ["gh", "списки", `gh__${"_".repeat(6)}`],
    ["x", "y".repeat(80), `x__${"y".repeat(61)}`],
  ])("%s + %s → %s", (server, tool, name) => {
    expect(mcpFunctionName(server, tool)).toBe(name);
    expect(mcpFunctionName(server, tool)).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });
});

describe("mcpServersOf", () => {
  it("finds the servers an agent names whole, by one tool, or in its confirmation list; ignores other tools", () => {
    const agent = AgentDefinition.parse({
      name: "a",
      tools: { allow: ["lookup", "crm__find", "nothing__x"], confirmation: { require: ["gh"] } },
    });
    expect(mcpServersOf(agent, registry).map((s) => s.name)).toEqual(["crm", "gh"]);
    expect(mcpServersOf(AgentDefinition.parse({ name: "b", tools: { allow: ["lookup"] } }), registry)).toEqual([]);
  });
});

describe("expandMcpTools", () => {
  it("a server stands for its offered tools (its allow-list applied); a registry tool keeps its name; approvals expand too", () => {
    const agent = AgentDefinition.parse({
      name: "a",
      tools: { allow: ["gh", "crm", "lookup"], confirmation: { require: ["crm"] } },
    });
    const { agent: expanded, tools } = expandMcpTools(
      agent,
      registry,
      new Map([
        ["gh", listed("create_issue", "close_issue")],
        ["crm", listed("find", "delete_everything")],
      ]),
    );
    expect(expanded.tools.allow).toEqual(["gh__close_issue", "crm__find", "lookup"]);
    expect(expanded.tools.confirmation.require).toEqual(["crm__find"]);
    // The client tool of that name keeps it: the server's create_issue is not offered.
    expect(tools.get("gh__create_issue")?.kind).toBe("client");
    expect(tools.get("crm__find")).toMatchObject({
      kind: "mcp",
      url: "https://mcp.test/crm",
      mcp: { server: "crm", tool: "find" },
    });
    expect(tools.has("crm__delete_everything")).toBe(false);
  });

  it("a tool named by its function name is offered alone; a schema that is not an object becomes an empty object schema", () => {
    const agent = AgentDefinition.parse({ name: "a", tools: { allow: ["gh__close_issue"] } });
    const { agent: expanded, tools } = expandMcpTools(
      agent,
      registry,
      new Map([["gh", [{ name: "close_issue", inputSchema: { type: "string" } }]]]),
    );
    expect(expanded.tools.allow).toEqual(["gh__close_issue"]);
    expect(tools.get("gh__close_issue")?.parameters).toEqual({ type: "object", properties: {} });
  });
});

describe("callOutput", () => {
  it("joins text blocks, gives other blocks and structured content as JSON, and marks isError", () => {
    expect(
      callOutput("t", {
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      }),
    ).toEqual({ ok: true, output: "a\nb" });
    expect(callOutput("t", { content: [{ type: "image", data: "x", mimeType: "image/png" }] }).output).toBe(
      '{"type":"image","data":"x","mimeType":"image/png"}',
    );
    expect(callOutput("t", { content: [], structuredContent: { n: 1 } })).toEqual({ ok: true, output: '{"n":1}' });
    expect(callOutput("t", { content: [{ type: "text", text: "boom" }], isError: true })).toEqual({
      ok: false,
      output: "Error: 't' reported an error: boom",
    });
  });
});
