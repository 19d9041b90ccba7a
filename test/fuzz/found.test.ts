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

  it("rotating the signing secret with a body that is not an object is 400, and rotates nothing (it read the body twice: a 500)", async () => {
    const before = (await call("GET", "/v1/config/signing-secret")).json;
    const refused = await call("POST", "/v1/config/signing-secret/rotate", []);
    expect(refused.status).toBe(400);
    expect(refused.json.error.code).toBe("VALIDATION_FAILED");
    expect((await call("GET", "/v1/config/signing-secret")).json).toEqual(before);
    expect((await call("POST", "/v1/config/signing-secret/rotate")).status).toBe(200);
  });
});
