import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { BETA_KEY, call } from "./helpers";

describe("GET/PUT/DELETE /v1/config/routing", () => {
  it("shows every value with its source: default, env (wrangler.toml vars)", async () => {
    await call("DELETE", "/v1/config/routing");
    const { status, json } = await call("GET", "/v1/config/routing");
    expect(status).toBe(200);
    expect(json.config).toMatchObject({ enabled: true, strategy: "hybrid", threshold: 80, fallback: "prompt_user" });
    // The test pool sets ROUTING_LLM_PROVIDER (vitest.config.ts), so the provider is an env value too.
    expect(json.sources).toMatchObject({
      strategy: "env",
      threshold: "env",
      enabled: "default",
      "llm.provider": "env",
      "llm.model": "default",
    });
    expect(json.stored).toBeNull();
  });

  it("stores the tenant layer over env, and the tenant layer only for that tenant", async () => {
    const put = await call("PUT", "/v1/config/routing", { threshold: 65, llm: { timeout_ms: 900 } });
    expect(put.status).toBe(200);
    expect(put.json.config.threshold).toBe(65);
    expect(put.json.sources.threshold).toBe("tenant");
    const read = await call("GET", "/v1/config/routing");
    expect(read.json.sources["llm.timeout_ms"]).toBe("tenant");
    expect(read.json.stored).toEqual({ threshold: 65, llm: { timeout_ms: 900 } });
    const beta = await call("GET", "/v1/config/routing", undefined, { key: BETA_KEY });
    expect(beta.json.config.threshold).toBe(80);
    expect(beta.json.sources.threshold).toBe("env");
  });

  it("a Worker var sits between defaults and the tenant", async () => {
    await call("DELETE", "/v1/config/routing");
    const withVar = { ...env, ROUTING_FALLBACK: "none", ROUTING_LLM_TIMEOUT_MS: "1234" };
    const response = await app.fetch(
      new Request("http://relay.test/v1/config/routing", { headers: { Authorization: "Bearer alpha-test-key" } }),
      withVar,
    );
    const json = (await response.json()) as {
      config: { fallback: string; llm: { timeout_ms: number } };
      sources: Record<string, string>;
    };
    expect(json.config.fallback).toBe("none");
    expect(json.sources.fallback).toBe("env");
    expect(json.config.llm.timeout_ms).toBe(1234);
  });

  it("refuses invalid values (400) and inconsistent combinations (400 INVALID_CONFIG) without storing them", async () => {
    await call("PUT", "/v1/config/routing", { threshold: 70 });
    for (const bad of [
      { threshold: 101 },
      { strategy: "magic" },
      { llm: { timeout_ms: 10 } },
      { surprise: true },
      { default_agent: "Not A Slug" },
    ]) {
      const response = await call("PUT", "/v1/config/routing", bad);
      expect(response.status).toBe(400);
      expect(response.json.error.code).toBe("VALIDATION_FAILED");
    }
    const inconsistent = await call("PUT", "/v1/config/routing", { fallback: "default_agent" });
    expect(inconsistent.json.error.code).toBe("INVALID_CONFIG");
    expect((await call("GET", "/v1/config/routing")).json.stored).toEqual({ threshold: 70 });
  });

  it("DELETE clears the tenant layer", async () => {
    await call("PUT", "/v1/config/routing", { threshold: 10 });
    const cleared = await call("DELETE", "/v1/config/routing");
    expect(cleared.json.config.threshold).toBe(80);
    expect(cleared.json.stored).toBeNull();
  });
});
