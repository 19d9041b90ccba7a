import type { AgentDO } from "../durable-objects/agent";
import type { SessionDO } from "../durable-objects/session";
import type { RoutingVars } from "./routing/config";

/** Bindings, vars and secrets the Worker and its Durable Objects receive. */
export interface Env extends RoutingVars {
  DB: D1Database;
  SESSIONS: DurableObjectNamespace<SessionDO>;
  AGENTS: DurableObjectNamespace<AgentDO>;
  /** Workers AI binding; declared only when the `workers-ai` provider is used. */
  AI?: Ai;

  /** `tenant:key` entries, comma-separated. No keys → every /v1 call is refused (503). */
  RELAY_API_KEYS?: string;

  /** OpenAI-compatible provider's base URL (default https://api.openai.com/v1); its key is in RoutingVars. */
  OPENAI_BASE_URL?: string;

  /** "1" enables the fault-injection hooks the crash-safety tests use. Never set in production. */
  RELAY_TEST_HOOKS?: string;
}
