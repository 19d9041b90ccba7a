import * as z from "zod";
import type { TraceEvent } from "../schemas/run";
import { capturedText } from "./content";
import {
  A2A,
  ERROR_TYPE,
  GEN_AI,
  GEN_AI_OPERATION,
  GEN_AI_TOOL_TYPE,
  PROVIDER_NAME,
  RELAY,
  SPAN_NAME,
} from "./semconv";
import { isoToNanos, laterOf, type Span } from "./span";

/**
 * The attributes of each kind of step's span (docs/observability.md, Spans): a model call, a
 * tool call, a handoff, an approval's wait, the route, a compaction. `spansFromRun`
 * (from-trace.ts) makes each span's frame from its trace event; these fill it in.
 */

/** Relay's kinds of tool, as the registry and the runtime know them; `peer`: talking to another agent. */
export const RelayToolKind = z.enum(["http", "mcp", "client", "handoff", "builtin", "peer"]);
export type RelayToolKind = z.infer<typeof RelayToolKind>;

/** An agent-to-agent tool, by what it does (docs/collaboration.md). */
export interface PeerTool {
  kind: "peer";
  action: string;
}

/** Tools by name and kind: the registry's, and the agent-to-agent tools by their action. */
export type ToolKinds = Readonly<Record<string, "http" | "mcp" | "client" | PeerTool>>;

/** Tools whose call asks for a handoff. */
export const HANDOFF_TOOL = /^(transfer_to_|return_to_)/;

/** A link to the request that resumed the run at `event`'s step, when it carried a trace. */
export function resumedLinks(event: TraceEvent): Span["links"] {
  const by = event.details.resumed_by;
  return by ? [{ trace_id: by.trace_id, span_id: by.span_id, attributes: { [RELAY.linkKind]: "resumed_by" } }] : [];
}

export function providerOf(executor: string | undefined, provider: keyof typeof PROVIDER_NAME): string {
  if (executor === "human" || executor === "webhook" || executor === "a2a") return PROVIDER_NAME[executor];
  return PROVIDER_NAME[provider];
}

export function routeSpan(s: Span, event: TraceEvent): Span {
  const d = event.details;
  if (d.routing_method) s.attributes[RELAY.routeMethod] = d.routing_method;
  if (d.to_agent) s.attributes[RELAY.routeAgent] = d.to_agent;
  if (d.routing_confidence !== undefined) s.attributes[RELAY.routeConfidence] = { double: d.routing_confidence };
  const tiers = d.route_tiers;
  if (tiers) {
    if (tiers.rule_us !== undefined) s.attributes[RELAY.routeRuleUs] = tiers.rule_us;
    if (tiers.llm_ms !== undefined) s.attributes[RELAY.routeLlmMs] = tiers.llm_ms;
    s.attributes[RELAY.routeLlmConsulted] = tiers.llm_consulted;
  }
  return s;
}

/**
 * A model call (`chat {model}`), with what the provider said of its answer (finish reasons,
 * the model that answered, the time to its first chunk); a webhook's or a remote A2A agent's
 * answer is the call of another agent instead (`invoke_agent {agent}`, a client span), the
 * remote A2A agent's with the A2A method and task.
 */
export function modelSpan(s: Span, event: TraceEvent, provider: keyof typeof PROVIDER_NAME): Span {
  const d = event.details;
  const remote = d.executor === "webhook" || d.executor === "a2a";
  s.name = remote ? SPAN_NAME.invokeAgent(event.agent_name) : SPAN_NAME.chat(d.model);
  s.attributes[GEN_AI.operationName] = remote ? GEN_AI_OPERATION.invokeAgent : GEN_AI_OPERATION.chat;
  s.attributes[GEN_AI.providerName] = providerOf(d.executor, provider);
  if (d.executor === "a2a") {
    // The A2A conventions' client span: named by the method, for the request alone (the turn is the agent's
    // operation). Their conversation id would be the remote's context id, which Relay does not record.
    s.name = d.a2a?.method ?? "SendMessage";
    delete s.attributes[GEN_AI.operationName];
    delete s.attributes[GEN_AI.conversationId];
  }
  if (remote) s.attributes[GEN_AI.agentName] = event.agent_name;
  else if (d.model) s.attributes[GEN_AI.requestModel] = d.model;
  if (d.tokens) {
    s.attributes[GEN_AI.usageInputTokens] = d.tokens.prompt;
    s.attributes[GEN_AI.usageOutputTokens] = d.tokens.completion;
  }
  if (d.streamed !== undefined) {
    s.attributes[GEN_AI.requestStream] = true;
    s.attributes[RELAY.llmStreamed] = d.streamed;
  }
  if (d.finish_reasons) s.attributes[GEN_AI.responseFinishReasons] = d.finish_reasons;
  if (d.response_model) s.attributes[GEN_AI.responseModel] = d.response_model;
  // The conventions count it in seconds, as a double.
  if (d.first_chunk_ms !== undefined)
    s.attributes[GEN_AI.responseTimeToFirstChunk] = { double: d.first_chunk_ms / 1000 };
  if (d.a2a) {
    s.attributes[A2A.methodName] = d.a2a.method;
    if (d.a2a.task_id) s.attributes[A2A.taskId] = d.a2a.task_id;
    if (d.a2a.task_state) s.attributes[A2A.taskState] = d.a2a.task_state;
  }
  if (d.outcome) s.attributes[RELAY.agentOutcome] = d.outcome;
  return s;
}

export function toolKind(tool: string, tools: ToolKinds | undefined): RelayToolKind {
  const kind = tools?.[tool];
  if (kind !== undefined) return typeof kind === "object" ? "peer" : kind;
  // An MCP server's tools are named `<registry tool>__<its name>` (docs/mcp.md).
  const server = tool.indexOf("__");
  if (server > 0 && tools?.[tool.slice(0, server)] === "mcp") return "mcp";
  return HANDOFF_TOOL.test(tool) ? "handoff" : "builtin";
}

/**
 * An approval's wait (`relay.approval`): from the call's request for approval to the
 * decision, under the turn that asked. `s` is made from the request's event.
 */
export function approvalSpan(s: Span, decided: TraceEvent, tool: string): Span {
  s.end_ns = laterOf(isoToNanos(decided.timestamp), s.start_ns);
  s.links = resumedLinks(decided);
  const approved = decided.details.outcome?.startsWith("approved") === true;
  Object.assign(s.attributes, {
    [GEN_AI.toolName]: tool,
    [RELAY.approvalOutcome]: approved ? "approved" : "denied",
    [RELAY.approvalDecisionEventId]: decided.event_id,
  });
  return s;
}

/** An agent-to-agent call: which collaboration, what it does, and to whom (the agent named is not content). */
export function peerAttributes(s: Span, event: TraceEvent, peer: PeerTool, collaboration: string | undefined): void {
  s.attributes[RELAY.collaborationAction] = peer.action;
  if (collaboration) s.attributes[RELAY.collaborationId] = collaboration;
  const args = event.details.tool_args;
  const to = args && typeof args === "object" ? (args as { agent?: unknown }).agent : undefined;
  if (typeof to === "string") s.attributes[RELAY.collaborationTo] = to;
}

export function toolSpan(s: Span, event: TraceEvent, tool: string, kind: RelayToolKind, capture: boolean): Span {
  const outcome = event.details.outcome;
  const byClient = kind === "client" || outcome === "output from the client";
  Object.assign(s.attributes, {
    [GEN_AI.operationName]: GEN_AI_OPERATION.executeTool,
    [GEN_AI.toolName]: tool,
    [GEN_AI.toolType]: byClient ? GEN_AI_TOOL_TYPE.function : GEN_AI_TOOL_TYPE.extension,
    [RELAY.toolKind]: byClient ? "client" : kind,
  });
  if (outcome) s.attributes[RELAY.toolOutcome] = outcome;
  if (capture && event.details.tool_args !== undefined)
    s.attributes[GEN_AI.toolCallArguments] = capturedText(JSON.stringify(event.details.tool_args));
  if (outcome === "interrupted") s.status = { code: "error", message: "interrupted by a restart" };
  else if (event.error !== null)
    s.status = capture ? { code: "error", message: capturedText(event.error) } : { code: "error" };
  if (s.status.code === "error") s.attributes[ERROR_TYPE] = outcome === "interrupted" ? "interrupted" : "tool_error";
  return s;
}

export function handoffSpan(s: Span, event: TraceEvent, capture: boolean): Span {
  const d = event.details;
  const tool = d.tool_name ?? "";
  s.attributes[RELAY.handoffFrom] = d.from_agent ?? event.agent_name;
  if (d.to_agent) s.attributes[RELAY.handoffTo] = d.to_agent;
  s.attributes[RELAY.handoffMode] = tool.startsWith("return_to_") ? "return" : "transfer";
  s.attributes[RELAY.handoffOutcome] = d.outcome ?? (event.error ? "refused" : "completed");
  if (tool) s.attributes[GEN_AI.toolName] = tool;
  if (capture && d.handoff_reason) s.attributes[RELAY.handoffReason] = capturedText(d.handoff_reason);
  if (event.error) {
    s.status = { code: "error" };
    s.attributes[ERROR_TYPE] = event.error;
  }
  return s;
}

export function compactionSpan(s: Span, event: TraceEvent): Span {
  const c = event.details.compaction;
  if (event.details.model) s.attributes[GEN_AI.requestModel] = event.details.model;
  if (c)
    Object.assign(s.attributes, {
      [RELAY.compactionStrategy]: c.strategy,
      [RELAY.compactionItems]: c.items,
      [RELAY.compactionTokensBefore]: c.tokens_before,
      [RELAY.compactionTokensAfter]: c.tokens_after,
    });
  return s;
}
