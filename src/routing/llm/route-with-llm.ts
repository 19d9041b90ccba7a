/**
 * The LLM routing tier (docs/routing.md, The tiers): the router prompt plus one transfer tool per enabled
 * agent, tool choice required, a deadline on the call; the first tool call wins. Every way
 * the model or its provider can fail comes back as an outcome value for the fallback.
 */
import * as z from "zod";
import { deadline } from "../../lib/deadline";
import { raceAbort } from "../../providers/failures";
import {
  type ChatProvider,
  type ChatRequest,
  type ChatResponse,
  isProviderError,
  type ProviderErrorKind,
} from "../../providers/types";
import { buildRouterPrompt, buildTransferTools, type RoutableAgent } from "./transfer-tools";

export interface LlmRouteOptions {
  model: string;
  /** Deadline for the provider call, in ms (`llm.timeout_ms`). */
  timeoutMs: number;
}

/** Why the LLM tier did not choose an agent. */
export type LlmFailureReason =
  | "timeout"
  | "http_error"
  | "network_error"
  | "malformed_response"
  | "malformed_arguments"
  | "no_tool_call"
  | "unknown_agent";

/** The call the decision rests on; `arguments` is the parsed JSON, or the raw text when it does not parse. */
export interface LlmToolCall {
  name: string;
  arguments: unknown;
}

export type LlmRouteOutcome =
  | { ok: true; agent: string; reason: string; context?: string; tool_call: LlmToolCall; duration_ms: number }
  | { ok: false; reason: LlmFailureReason; message: string; tool_call?: LlmToolCall; duration_ms: number };

const FAILURE_BY_KIND: Record<ProviderErrorKind, LlmFailureReason> = {
  timeout: "timeout",
  http: "http_error",
  network: "network_error",
  malformed: "malformed_response",
};

const TransferArguments = z.object({
  reason: z.string().trim().min(1),
  // Models often send null or "" for an optional field they have nothing for.
  context: z.string().nullish(),
});

/** How many offered tool names an unknown_agent message lists. */
const LISTED_TOOLS = 10;

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function clip(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/**
 * Asks `provider` to pick one of the enabled `agents` for `input`. Never throws for a
 * provider failure or a bad model answer; an error that is neither (a provider bug) propagates.
 */
export async function routeWithLlm(
  provider: ChatProvider,
  agents: readonly RoutableAgent[],
  input: string,
  options: LlmRouteOptions,
): Promise<LlmRouteOutcome> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const transfer = buildTransferTools(agents);
  if (transfer.tools.length === 0) {
    return { ok: false, reason: "no_tool_call", message: "no enabled agent to hand off to", duration_ms: elapsed() };
  }
  const request: ChatRequest = {
    model: options.model,
    messages: [buildRouterPrompt(agents, transfer), { role: "user", content: input }],
    tools: transfer.tools,
    tool_choice: "required",
  };

  const { signal, clear } = deadline(options.timeoutMs);
  let response: ChatResponse;
  try {
    // The race enforces the deadline even against a provider that ignores its signal.
    response = await raceAbort(provider.complete(request, signal), signal, provider.name);
  } catch (error) {
    if (isProviderError(error)) {
      return { ok: false, reason: FAILURE_BY_KIND[error.kind], message: error.message, duration_ms: elapsed() };
    }
    if (signal.aborted) {
      return { ok: false, reason: "timeout", message: `${provider.name}: request timed out`, duration_ms: elapsed() };
    }
    throw error;
  } finally {
    clear();
  }

  const call = response.tool_calls[0];
  if (!call) {
    const said = response.content ? `: "${clip(response.content)}"` : "";
    return {
      ok: false,
      reason: "no_tool_call",
      message: `the model answered without a tool call${said}`,
      duration_ms: elapsed(),
    };
  }
  const json = parseJson(call.arguments);
  const tool_call: LlmToolCall = { name: call.name, arguments: json.ok ? json.value : call.arguments };

  const agent = transfer.agentByTool.get(call.name);
  if (agent === undefined) {
    const offered = [...transfer.agentByTool.keys()];
    const listed = offered.slice(0, LISTED_TOOLS).join(", ") + (offered.length > LISTED_TOOLS ? ", …" : "");
    return {
      ok: false,
      reason: "unknown_agent",
      message: `the model called "${clip(call.name, 80)}", which is not an offered tool (offered: ${listed})`,
      tool_call,
      duration_ms: elapsed(),
    };
  }
  if (!json.ok) {
    return {
      ok: false,
      reason: "malformed_arguments",
      message: "the tool call's arguments are not valid JSON",
      tool_call,
      duration_ms: elapsed(),
    };
  }
  const args = TransferArguments.safeParse(json.value);
  if (!args.success) {
    return {
      ok: false,
      reason: "malformed_arguments",
      message: "the tool call's arguments need a non-empty string `reason` (and `context`, if any, a string)",
      tool_call,
      duration_ms: elapsed(),
    };
  }
  const context = args.data.context?.trim();
  return context
    ? { ok: true, agent, reason: args.data.reason, context, tool_call, duration_ms: elapsed() }
    : { ok: true, agent, reason: args.data.reason, tool_call, duration_ms: elapsed() };
}
