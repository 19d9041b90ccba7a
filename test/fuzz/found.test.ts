import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "../api/helpers";

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
});
