/**
 * The span names and attribute keys Relay's traces use (docs/observability.md, Conventions).
 *
 * Checked against the OpenTelemetry GenAI semantic conventions, which moved out of
 * open-telemetry/semantic-conventions (after v1.44.0) into
 * open-telemetry/semantic-conventions-genai. That repository has no release yet; the files
 * were read at these commits:
 * - model/gen-ai/registry.yaml and docs/gen-ai/gen-ai-agent-spans.md at 002c8a6e;
 * - docs/gen-ai/gen-ai-guardrails.md at f5e3733b;
 * - model/a2a/registry.yaml at 7d3789ae, docs/gen-ai/a2a.md at 6718089f.
 * Every GenAI attribute there has status "development": names may still change.
 *
 * Keys Relay adds are under `relay.`; nothing here uses a name the conventions define for
 * something else.
 */

/** The conventions' version as Relay pins it (docs/observability.md). */
export const SEMCONV_GENAI_PIN = "open-telemetry/semantic-conventions-genai@002c8a6e (unreleased)";

/** `gen_ai.operation.name` values Relay emits (all defined by the conventions). */
export const GEN_AI_OPERATION = {
  invokeAgent: "invoke_agent",
  chat: "chat",
  executeTool: "execute_tool",
} as const;

/** The conventions' `gen_ai.*` attributes Relay sets. */
export const GEN_AI = {
  operationName: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  agentName: "gen_ai.agent.name",
  agentDescription: "gen_ai.agent.description",
  conversationId: "gen_ai.conversation.id",
  requestModel: "gen_ai.request.model",
  requestStream: "gen_ai.request.stream",
  responseModel: "gen_ai.response.model",
  responseFinishReasons: "gen_ai.response.finish_reasons",
  responseTimeToFirstChunk: "gen_ai.response.time_to_first_chunk",
  usageInputTokens: "gen_ai.usage.input_tokens",
  usageOutputTokens: "gen_ai.usage.output_tokens",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  /** Opt-in content: only with content capture on. */
  toolCallArguments: "gen_ai.tool.call.arguments",
  /** Opt-in content: only with content capture on. */
  toolCallResult: "gen_ai.tool.call.result",
  /** Opt-in content: the messages an agent's turn was given, as JSON text. */
  inputMessages: "gen_ai.input.messages",
  /** Opt-in content: the messages an agent's turn answered with, as JSON text. */
  outputMessages: "gen_ai.output.messages",
  guardrailComponentName: "gen_ai.guardrail.component.name",
  guardrailResultType: "gen_ai.guardrail.result.type",
  guardrailResultValue: "gen_ai.guardrail.result.value",
  guardrailSource: "gen_ai.guardrail.source",
} as const;

/** The general convention for a failed operation's class (stable). */
export const ERROR_TYPE = "error.type";

/**
 * The guardrail result event. The conventions keep the `apply_guardrail` span for a request
 * to a remote guardrail service; an in-process check such as Relay's output schema is
 * reported as this event instead, on the span of the agent whose answer was checked.
 */
export const GUARDRAIL_RESULT_EVENT = "gen_ai.guardrail.result";

/**
 * `gen_ai.tool.type` values, as the registry describes them: `extension` runs on the
 * agent's side (Relay calls it), `function` on the client's side (the API client runs it).
 */
export const GEN_AI_TOOL_TYPE = { extension: "extension", function: "function" } as const;

/**
 * `gen_ai.provider.name` for Relay's model providers. `openai` is the conventions' own
 * value (Relay speaks the OpenAI API, whoever serves it); the others are not in the list of
 * well-known values, which allows custom ones.
 */
export const PROVIDER_NAME = {
  openai: "openai",
  "workers-ai": "cloudflare.workers_ai",
  local: "relay.local",
  /** A turn a person takes from the inbox. */
  human: "relay.human",
  /** A turn a tenant's webhook answers. */
  webhook: "relay.webhook",
  /** A turn a remote A2A agent answers. */
  a2a: "relay.a2a",
} as const;

/** A2A attributes, defined by the conventions' A2A registry (model/a2a/registry.yaml). */
export const A2A = {
  methodName: "a2a.method.name",
  taskId: "a2a.task.id",
  taskState: "a2a.task.state",
  messageId: "a2a.message.id",
  protocolVersion: "a2a.protocol.version",
} as const;

/** Span names: `{operation} {subject}` where the conventions say so, `relay.*` for Relay's own. */
export const SPAN_NAME = {
  invokeAgent: (agent: string) => `invoke_agent ${agent}`,
  chat: (model: string | undefined) => (model ? `chat ${model}` : "chat"),
  executeTool: (tool: string) => `execute_tool ${tool}`,
  /** Not in the conventions: the router's decision. */
  route: "relay.route",
  /** Not in the conventions: a handoff between agents. */
  handoff: "relay.handoff",
  /** Not in the conventions: compaction of an agent's view before its turn. */
  compaction: "relay.compaction",
  /** Not in the conventions: a tool call waiting for a person's approval. */
  approval: "relay.approval",
} as const;

/** Relay's own attributes and event names, all under `relay.`. */
export const RELAY = {
  tenant: "relay.tenant",
  runId: "relay.run.id",
  /** Why a span links to another: `resumed_by`, the request that resumed a paused run. */
  linkKind: "relay.link.kind",
  traceEventId: "relay.trace.event_id",
  /** The executor of a turn: model, webhook, human or a2a. */
  executor: "relay.agent.executor",
  /** How an agent's turn ended: completed, failed, handed off, interrupted. */
  agentOutcome: "relay.agent.outcome",
  /** Whether a model call's text came in pieces (it asked to stream). */
  llmStreamed: "relay.llm.streamed",
  routeMethod: "relay.route.method",
  routeAgent: "relay.route.agent",
  routeConfidence: "relay.route.confidence",
  /** Per-tier timings of a route decision: the rule tier in µs, the LLM tier's call in ms, and whether it was asked. */
  routeRuleUs: "relay.route.tier.rule_us",
  routeLlmMs: "relay.route.tier.llm_ms",
  routeLlmConsulted: "relay.route.tier.llm_consulted",
  handoffFrom: "relay.handoff.from",
  handoffTo: "relay.handoff.to",
  handoffMode: "relay.handoff.mode",
  handoffOutcome: "relay.handoff.outcome",
  /** Opt-in content: the reason the model gave. */
  handoffReason: "relay.handoff.reason",
  /** Relay's kind of tool: http, mcp, client, handoff or builtin. */
  toolKind: "relay.tool.kind",
  toolOutcome: "relay.tool.outcome",
  approvalOutcome: "relay.approval.outcome",
  /** The trace event of an approval's decision (its wait's span is named after the request's). */
  approvalDecisionEventId: "relay.approval.decision_event_id",
  compactionStrategy: "relay.compaction.strategy",
  compactionItems: "relay.compaction.items",
  compactionTokensBefore: "relay.compaction.tokens_before",
  compactionTokensAfter: "relay.compaction.tokens_after",
  /** Agent-to-agent tools: the session's collaboration, the tool's action, the agent addressed. */
  collaborationId: "relay.collaboration.id",
  collaborationAction: "relay.collaboration.action",
  collaborationTo: "relay.collaboration.to",
} as const;

/** Span events Relay adds (names under `relay.`). */
export const RELAY_EVENT = {
  /** A person's turn began: the run waits for the inbox. */
  humanTurnRequested: "relay.human_turn.requested",
  toolCallRequested: "relay.tool_call.requested",
} as const;
