import { describe, expect, it } from "vitest";
import { configProblems, DEFAULT_ROUTING, patchFromVars, resolveConfig } from "../../src/routing/config";

describe("routing config layering", () => {
  it("uses the built-in defaults when nothing is set, each marked 'default'", () => {
    const { config, sources } = resolveConfig({});
    expect(config).toEqual(DEFAULT_ROUTING);
    expect(Object.values(sources).every((s) => s === "default")).toBe(true);
  });

  it("lets each layer win over the one below, value by value", () => {
    const env = patchFromVars({
      ROUTING_THRESHOLD: "60",
      ROUTING_STRATEGY: "rule",
      ROUTING_LLM_MODEL: "env-model",
    }).patch;
    const tenant = { threshold: 70, llm: { timeout_ms: 1500 } };
    const request = { threshold: 90 };
    const { config, sources } = resolveConfig({ env, tenant, request });
    expect(config.threshold).toBe(90);
    expect(sources.threshold).toBe("request");
    expect(config.strategy).toBe("rule");
    expect(sources.strategy).toBe("env");
    expect(config.llm).toEqual({ provider: "local", model: "env-model", timeout_ms: 1500 });
    expect(sources["llm.model"]).toBe("env");
    expect(sources["llm.timeout_ms"]).toBe("tenant");
    expect(sources["llm.provider"]).toBe("default");
    expect(sources.fallback).toBe("default");
  });

  it("reads every documented Worker var", () => {
    const { patch, warnings } = patchFromVars({
      ROUTING_ENABLED: "false",
      ROUTING_STRATEGY: "llm",
      ROUTING_THRESHOLD: "55.5",
      ROUTING_LLM_PROVIDER: "workers-ai",
      ROUTING_LLM_MODEL: "@cf/meta/llama",
      ROUTING_LLM_TIMEOUT_MS: "2500",
      ROUTING_FALLBACK: "default_agent",
      ROUTING_DEFAULT_AGENT: "triage",
    });
    expect(warnings).toEqual([]);
    expect(patch).toEqual({
      enabled: false,
      strategy: "llm",
      threshold: 55.5,
      llm: { provider: "workers-ai", model: "@cf/meta/llama", timeout_ms: 2500 },
      fallback: "default_agent",
      default_agent: "triage",
    });
  });

  it("ignores an unusable Worker var with a warning instead of taking the API down", () => {
    const { patch, warnings } = patchFromVars({ ROUTING_THRESHOLD: "high", ROUTING_STRATEGY: "magic" });
    expect(patch).toEqual({});
    expect(warnings).toHaveLength(2);
    expect(warnings.join("\n")).toContain('ROUTING_THRESHOLD="high" ignored');
    expect(warnings.join("\n")).toContain('ROUTING_STRATEGY="magic" ignored');
  });

  it("makes OpenAI the default provider when a key is configured, unless a provider is named", () => {
    expect(patchFromVars({ OPENAI_API_KEY: "sk-test" }).patch.llm?.provider).toBe("openai");
    expect(patchFromVars({ OPENAI_API_KEY: "sk-test", ROUTING_LLM_PROVIDER: "local" }).patch.llm?.provider).toBe(
      "local",
    );
    expect(patchFromVars({}).patch.llm).toBeUndefined();
  });

  it("flags a default_agent fallback with no agent named", () => {
    expect(configProblems({ ...DEFAULT_ROUTING, fallback: "default_agent", default_agent: null })).toHaveLength(1);
    expect(configProblems({ ...DEFAULT_ROUTING, fallback: "default_agent", default_agent: "triage" })).toEqual([]);
  });
});
