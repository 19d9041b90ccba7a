/**
 * Choosing a model provider from configuration: `openai` needs a key, `workers-ai` needs
 * the AI binding, `local` needs nothing and is the default when no key is configured.
 */
import { err, ok, type Result } from "../errors";
import { LocalProvider } from "./local";
import { OpenAIProvider } from "./openai";
import type { ChatProvider, ProviderName } from "./types";
import { type AiBinding, WorkersAIProvider } from "./workers-ai";

export { type LexicalScore, LocalProvider, lexicalTokens, scoreTools } from "./local";
export { DEFAULT_OPENAI_BASE_URL, OpenAIProvider, type OpenAIProviderOptions } from "./openai";
export * from "./types";
export { type AiBinding, WorkersAIProvider } from "./workers-ai";

/** The part of the Worker's env the providers read (`Env` satisfies it). */
export interface ProviderEnv {
  OPENAI_BASE_URL?: string;
  OPENAI_API_KEY?: string;
  AI?: AiBinding;
}

function apiKey(env: ProviderEnv): string | null {
  const key = env.OPENAI_API_KEY?.trim();
  return key ? key : null;
}

/** The named provider, or DEPENDENCY_UNAVAILABLE naming what is missing. */
export function resolveProvider(name: ProviderName, env: ProviderEnv): Result<ChatProvider> {
  switch (name) {
    case "openai": {
      const key = apiKey(env);
      if (!key) {
        return err(
          "DEPENDENCY_UNAVAILABLE",
          "The openai provider needs the OPENAI_API_KEY secret; none is configured.",
          {
            provider: name,
            missing: "OPENAI_API_KEY",
          },
        );
      }
      const baseUrl = env.OPENAI_BASE_URL?.trim();
      return ok(new OpenAIProvider(baseUrl ? { apiKey: key, baseUrl } : { apiKey: key }));
    }
    case "workers-ai":
      if (!env.AI) {
        return err("DEPENDENCY_UNAVAILABLE", "The workers-ai provider needs the AI binding; none is configured.", {
          provider: name,
          missing: "AI",
        });
      }
      return ok(new WorkersAIProvider(env.AI));
    case "local":
      return ok(new LocalProvider());
  }
}
