import { env } from "cloudflare:workers";
import { HttpResponse, http } from "msw";
import { beforeAll, describe, expect, it } from "vitest";
import { call, putSecret } from "../api/helpers";
import { llmServer } from "../fakes/server";
import { markedValue } from "./leaks";

/** Cases the API fuzz suite (./api-fuzz.test.ts) found, kept as plain tests. */

const registryVersion = () =>
  env.DB.prepare("SELECT version FROM registry_versions WHERE tenant = 'alpha'").first<number>("version");

describe("found by the API fuzz suite", () => {
  it("deleting an agent or a tool that does not exist is 404 and leaves the registry version (no router rebuild)", async () => {
    expect((await call("PUT", "/v1/agents/kept", { name: "kept", description: "k" })).status).toBe(201);
    const before = await registryVersion();
    expect((await call("DELETE", "/v1/agents/never-was")).json.error.code).toBe("AGENT_NOT_FOUND");
    expect((await call("DELETE", "/v1/tools/never_was")).json.error.code).toBe("TOOL_NOT_FOUND");
    expect(await registryVersion()).toBe(before);
    expect((await call("DELETE", "/v1/agents/kept")).status).toBe(204);
    expect(await registryVersion()).toBe(before! + 1);
  });

  it("rotating the signing secret with a body that is not an object is 400, and rotates nothing (it read the body twice: a 500)", async () => {
    const before = (await call("GET", "/v1/config/signing-secret")).json;
    const refused = await call("POST", "/v1/config/signing-secret/rotate", []);
    expect(refused.status).toBe(400);
    expect(refused.json.error.code).toBe("VALIDATION_FAILED");
    expect((await call("GET", "/v1/config/signing-secret")).json).toEqual(before);
    expect((await call("POST", "/v1/config/signing-secret/rotate")).status).toBe(200);
  });
});

// An MCP server's error was passed on as the server wrote it, so a server that echoed the credential
// Relay sent it got a vault value into the answer. What comes back from a call made with secrets is
// now redacted (src/outbound/redact.ts).
describe("found by the API fuzz suite: an MCP server that echoes its token", () => {
  const value = markedValue("echoed");
  let refresh: Awaited<ReturnType<typeof call>>;

  beforeAll(async () => {
    await putSecret("echoed-token", value);
    const tool = {
      name: "echoed",
      kind: "mcp",
      url: "https://mcp.echo.test/mcp",
      headers: { Authorization: "echoed-token" },
    };
    expect((await call("PUT", "/v1/tools/echoed", tool)).status).toBe(201);
    llmServer.use(
      http.all("https://mcp.echo.test/mcp", async ({ request }) => {
        const { id } = (await request.json()) as { id?: unknown };
        const message = `token '${request.headers.get("Authorization")}' is not valid`;
        return HttpResponse.json({ jsonrpc: "2.0", id: id ?? null, error: { code: -32001, message } });
      }),
    );
    refresh = await call("POST", "/v1/tools/echoed/refresh");
  });

  it("the refresh is refused with MCP_ERROR, quoting the server", () => {
    expect(refresh.status).toBe(502);
    expect(refresh.json.error.code).toBe("MCP_ERROR");
    expect(refresh.json.error.message).toContain("token '[secret]' is not valid");
  });

  it("its error does not hold the token's value", () => {
    expect(JSON.stringify(refresh.json)).not.toContain(value);
  });
});
