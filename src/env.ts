import type { AgentDO } from "../durable-objects/agent";
import type { SessionDO } from "../durable-objects/session";

/** Bindings, vars and secrets the Worker and its Durable Objects receive. */
export interface Env {
  DB: D1Database;
  SESSIONS: DurableObjectNamespace<SessionDO>;
  AGENTS: DurableObjectNamespace<AgentDO>;
  /** Workers AI binding; declared only when the `workers-ai` provider is used. */
  AI?: Ai;

  /** `tenant:key` entries, comma-separated. No keys → every /v1 call is refused (503). */
  RELAY_API_KEYS?: string;

  ROUTING_ENABLED?: string;
  ROUTING_STRATEGY?: string;
  ROUTING_THRESHOLD?: string;
  ROUTING_LLM_PROVIDER?: string;
  ROUTING_LLM_MODEL?: string;
  ROUTING_LLM_TIMEOUT_MS?: string;
  ROUTING_FALLBACK?: string;
  ROUTING_DEFAULT_AGENT?: string;

  /** OpenAI-compatible provider: base URL (default https://api.openai.com/v1) and key. */
  OPENAI_BASE_URL?: string;
  OPENAI_API_KEY?: string;

  /** "1" enables the fault-injection hooks the crash-safety tests use. Never set in production. */
  RELAY_TEST_HOOKS?: string;
}
