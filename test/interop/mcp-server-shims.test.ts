import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/client/validators/cf-worker";
import { DefaultJsonSchemaValidator, process } from "@modelcontextprotocol/server/_shims";
import { describe, expect, it } from "vitest";

/** The MCP server package's workerd shim, as wrangler.toml's alias gives it (src/interop/mcp-server-shims.ts). */
describe("the MCP server's shim", () => {
  it("validates with the client package's validator: one copy in the Worker", () => {
    expect(DefaultJsonSchemaValidator).toBe(CfWorkerJsonSchemaValidator);
    const check = new DefaultJsonSchemaValidator().getValidator({
      type: "object",
      properties: { n: { type: "integer" } },
      required: ["n"],
    });
    expect(check({ n: 1 })).toEqual({ valid: true, data: { n: 1 }, errorMessage: undefined });
    expect(check({ n: "1" })).toMatchObject({ valid: false, errorMessage: expect.stringContaining("#/n") });
  });

  it("has no stdio, as the package's own shim", () => {
    expect(() => process.stdin).toThrow(/StdioServerTransport is not supported/);
  });
});
