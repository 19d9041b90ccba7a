import { describe, expect, expectTypeOf, it } from "vitest";
import type { Env } from "../../src/env";
import { isRelayError } from "../../src/errors";
import { createProvider, defaultProviderName, resolveProvider, type AiBinding, type ProviderEnv } from "../../src/providers";
import { LocalProvider } from "../../src/providers/local";
import { OpenAIProvider } from "../../src/providers/openai";
import { WorkersAIProvider } from "../../src/providers/workers-ai";

const ai: AiBinding = { run: () => Promise.resolve({ response: "hi" }) };

describe("ProviderEnv", () => {
  it("is satisfied by the Worker's Env, AI binding included", () => {
    expectTypeOf<Env>().toExtend<ProviderEnv>();
    expectTypeOf<Ai>().toExtend<AiBinding>();
  });
});

describe("defaultProviderName", () => {
  it("is openai when a key is configured, else local", () => {
    expect(defaultProviderName({ OPENAI_API_KEY: "sk-1" })).toBe("openai");
    expect(defaultProviderName({})).toBe("local");
    expect(defaultProviderName({ OPENAI_API_KEY: "  " })).toBe("local");
    expect(defaultProviderName({ AI: ai })).toBe("local");
  });
});

describe("resolveProvider / createProvider", () => {
  it("builds each provider when its dependency is there", () => {
    expect(createProvider("local", {})).toBeInstanceOf(LocalProvider);
    expect(createProvider("workers-ai", { AI: ai })).toBeInstanceOf(WorkersAIProvider);
    const openai = createProvider("openai", { OPENAI_API_KEY: "sk-1", OPENAI_BASE_URL: "https://gw.example.test/v1/" });
    expect(openai).toBeInstanceOf(OpenAIProvider);
    expect((openai as OpenAIProvider).url).toBe("https://gw.example.test/v1/chat/completions");
    expect((createProvider("openai", { OPENAI_API_KEY: "sk-1" }) as OpenAIProvider).url).toBe("https://api.openai.com/v1/chat/completions");
  });

  it.each([
    ["openai", {}, "OPENAI_API_KEY"],
    ["openai", { OPENAI_API_KEY: "" }, "OPENAI_API_KEY"],
    ["workers-ai", { OPENAI_API_KEY: "sk-1" }, "AI"],
  ] as const)("refuses %s without its dependency (%j) as DEPENDENCY_UNAVAILABLE", (name, env, missing) => {
    const result = resolveProvider(name, env);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: "DEPENDENCY_UNAVAILABLE", details: { provider: name, missing } });
    expect(result.error.message).toContain(missing);

    let thrown: unknown;
    try {
      createProvider(name, env);
    } catch (error) {
      thrown = error;
    }
    expect(isRelayError(thrown)).toBe(true);
    expect(thrown).toMatchObject({ code: "DEPENDENCY_UNAVAILABLE" });
  });
});
