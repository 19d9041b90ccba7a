import { describe, expect, expectTypeOf, it } from "vitest";
import type { Env } from "../../src/env";
import { type AiBinding, type ProviderEnv, resolveProvider } from "../../src/providers";
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

describe("resolveProvider", () => {
  const provider = (...args: Parameters<typeof resolveProvider>) => {
    const result = resolveProvider(...args);
    if (!result.ok) throw new Error(result.error.message);
    return result.value;
  };

  it("builds each provider when its dependency is there", () => {
    expect(provider("local", {})).toBeInstanceOf(LocalProvider);
    expect(provider("workers-ai", { AI: ai })).toBeInstanceOf(WorkersAIProvider);
    const openai = provider("openai", { OPENAI_API_KEY: "sk-1", OPENAI_BASE_URL: "https://gw.example.test/v1/" });
    expect(openai).toBeInstanceOf(OpenAIProvider);
    expect((openai as OpenAIProvider).url).toBe("https://gw.example.test/v1/chat/completions");
    expect((provider("openai", { OPENAI_API_KEY: "sk-1" }) as OpenAIProvider).url).toBe(
      "https://api.openai.com/v1/chat/completions",
    );
  });

  it.each([
    ["openai", {}, "OPENAI_API_KEY"],
    ["openai", { OPENAI_API_KEY: "" }, "OPENAI_API_KEY"],
    ["workers-ai", { OPENAI_API_KEY: "sk-1" }, "AI"],
  ] as const)("refuses %s without its dependency (%j) as DEPENDENCY_UNAVAILABLE", (name, env, missing) => {
    const result = resolveProvider(name, env);
    expect(result).toMatchObject({
      ok: false,
      error: { code: "DEPENDENCY_UNAVAILABLE", details: { provider: name, missing } },
    });
    expect(!result.ok && result.error.message).toContain(missing);
  });
});
