import * as z from "zod";
import type { HistoryItem } from "../schemas/handoff";
import type { TraceEvent } from "../schemas/run";
import { turnMessages } from "./content";
import {
  A2A,
  ERROR_TYPE,
  GEN_AI,
  GEN_AI_OPERATION,
  GUARDRAIL_RESULT_EVENT,
  type PROVIDER_NAME,
  RELAY,
  RELAY_EVENT,
  SPAN_NAME,
} from "./semconv";
import { type Attributes, isoToNanos, laterOf, minusMs, type Span, type SpanEvent, type UnixNanos } from "./span";
import { derivedSpanId, derivedTraceId } from "./span-ids";
import {
  approvalSpan,
  compactionSpan,
  HANDOFF_TOOL,
  handoffSpan,
  modelSpan,
  peerAttributes,
  providerOf,
  resumedLinks,
  routeSpan,
  type ToolKinds,
  toolKind,
  toolSpan,
} from "./step-spans";

/**
 * A run's trace events as OpenTelemetry spans (docs/observability.md, From a run's trace):
 * one `invoke_agent` span per agent's turn — from its `agent_start` to its
 * `agent_complete`, `agent_error` or accepted handoff — with `chat`, `execute_tool`,
 * `relay.handoff`, `relay.approval` and `relay.compaction` children, a `relay.route` span for
 * the router's decision, and guardrail results as span events. Content, when captured, is
 * PII-masked (src/handoff/pii.ts). Pure: the same events give
 * the same spans, ids included (src/telemetry/span-ids.ts).
 *
 * Trace events record when a step ended and how long it took, so a span starts at
 * `timestamp - duration_ms`; steps recorded with no duration (handoffs, calls answered at
 * once) are spans of no length.
 */

/** A tenant's telemetry settings. Content (tool arguments, errors a tool wrote, reasons) is off unless asked for. */
export const TelemetrySettings = z.object({ capture_content: z.boolean().default(false) });
export type TelemetrySettings = z.infer<typeof TelemetrySettings>;

export interface RunTraceInput {
  run_id: string;
  session_id: string;
  /** The session's trace events, in order; events of other runs are ignored. */
  events: readonly TraceEvent[];
  settings: TelemetrySettings;
  /** The tenant's model provider (which `gen_ai.provider.name` model calls get). */
  provider: keyof typeof PROVIDER_NAME;
  /**
   * Tools by name and kind: the registry's, and the agent-to-agent tools (`peer`, by their
   * action); a name not here is a built-in (or a handoff by its name).
   */
  tools?: ToolKinds;
  /** The session's collaboration id, set on the spans of agent-to-agent tools. */
  collaboration_id?: string;
  /**
   * The A2A request that started the run: its server span (`SendMessage`,
   * `SendStreamingMessage`) is the run's top span, with the task's state as it is now.
   */
  a2a?: { method: string; message_id?: string; state: string };
  /** The run's conversation items, for content capture (their text on the agents' turns). */
  messages?: readonly HistoryItem[];
  /** The caller's context: its trace, and its span as the parent of the run's top spans. */
  parent?: { trace_id: string; span_id: string };
}

export interface RunSpans {
  trace_id: string;
  spans: Span[];
  /** `invoke_agent` spans still open (the run waits, or goes on): their children are in `spans`. */
  open: string[];
}

interface Turn {
  span: Span;
  executor: string | undefined;
}

/** The spans of one run, made from its trace events. */
export function spansFromRun(input: RunTraceInput): RunSpans {
  const trace_id = input.parent?.trace_id ?? derivedTraceId("relay.run", input.run_id);
  const server = input.a2a ? a2aServerSpan(input, trace_id) : null;
  const root = server?.span_id ?? input.parent?.span_id ?? null;
  const capture = input.settings.capture_content;
  const spans: Span[] = [];
  let turn: Turn | null = null;
  let lastHandoff: { span_id: string; to: string | undefined } | null = null;
  /** Handoff tools called whose handoff is not recorded yet, by tool name. */
  const handoffCalls = new Map<string, Span>();
  /** Approvals asked and not decided yet, by tool name (first asked, first decided). */
  const asked = new Map<string, { event: TraceEvent; parent: string }[]>();

  const span = (event: TraceEvent, role: string, name: string, kind: Span["kind"], parent: string | null): Span => {
    const end = isoToNanos(event.timestamp);
    return {
      trace_id,
      span_id: derivedSpanId(trace_id, event.event_id, role),
      parent_span_id: parent,
      name,
      kind,
      start_ns: minusMs(end, event.duration_ms),
      end_ns: end,
      attributes: {
        [GEN_AI.conversationId]: input.session_id,
        [RELAY.runId]: input.run_id,
        [RELAY.traceEventId]: event.event_id,
      },
      events: [],
      links: resumedLinks(event),
      status: { code: "unset" },
    };
  };
  const fail = (s: Span, type: string, message?: string) => {
    s.status = message === undefined ? { code: "error" } : { code: "error", message };
    s.attributes[ERROR_TYPE] = type;
  };
  const close = (t: Turn, at: UnixNanos, outcome: string) => {
    t.span.end_ns = laterOf(at, t.span.start_ns);
    t.span.attributes[RELAY.agentOutcome] = outcome;
    t.span.attributes[GEN_AI.providerName] = providerOf(t.executor, input.provider);
    if (capture && input.messages) {
      const agent = String(t.span.attributes[GEN_AI.agentName]);
      Object.assign(t.span.attributes, turnMessages(input.messages, { ...t.span, agent }));
    }
    spans.push(t.span);
  };
  const open = (event: TraceEvent, role: string): Turn => {
    const s = span(event, role, SPAN_NAME.invokeAgent(event.agent_name), "internal", root);
    s.start_ns = s.end_ns;
    Object.assign(s.attributes, {
      [GEN_AI.operationName]: GEN_AI_OPERATION.invokeAgent,
      [GEN_AI.agentName]: event.agent_name,
      [GEN_AI.conversationId]: input.session_id,
    });
    if (lastHandoff && lastHandoff.to === event.agent_name)
      s.links.push({ trace_id, span_id: lastHandoff.span_id, attributes: {} });
    return { span: s, executor: event.details.executor };
  };
  /** The open turn of `event`'s agent; one is opened when the run's record starts mid-turn. */
  const current = (event: TraceEvent): Turn => {
    if (turn && turn.span.attributes[GEN_AI.agentName] === event.agent_name) return turn;
    if (turn) close(turn, minusMs(isoToNanos(event.timestamp), event.duration_ms), "interrupted");
    turn = open(event, "turn");
    turn.span.start_ns = minusMs(turn.span.end_ns, event.duration_ms);
    return turn;
  };
  const mark = (t: Turn, event: TraceEvent, name: string, attributes: Attributes) =>
    t.span.events.push({ name, time_ns: isoToNanos(event.timestamp), attributes } satisfies SpanEvent);

  for (const event of input.events) {
    const ours = event.correlation_id === input.run_id;
    if (event.event_type === "route" && (ours || event.correlation_id === input.session_id)) {
      spans.push(routeSpan(span(event, "route", SPAN_NAME.route, "internal", root), event));
      continue;
    }
    if (!ours) continue;
    switch (event.event_type) {
      case "agent_start": {
        // A run whose agent is a person starts the turn, then asks the inbox: one turn, not two.
        const same = turn?.span.attributes[GEN_AI.agentName] === event.agent_name;
        if (turn && same && event.details.executor === "human") {
          turn.executor = "human";
          turn.span.attributes[RELAY.executor] = "human";
          mark(turn, event, RELAY_EVENT.humanTurnRequested, {});
          break;
        }
        if (turn) close(turn, isoToNanos(event.timestamp), "interrupted");
        turn = open(event, "turn");
        if (event.details.executor) turn.span.attributes[RELAY.executor] = event.details.executor;
        if (event.details.executor === "human") mark(turn, event, RELAY_EVENT.humanTurnRequested, {});
        break;
      }
      case "llm_call": {
        const t = current(event);
        t.executor ??= event.details.executor;
        spans.push(modelSpan(span(event, "llm", "chat", "client", t.span.span_id), event, input.provider));
        break;
      }
      case "tool_call": {
        const t = current(event);
        const outcome = event.details.outcome;
        const tool = event.details.tool_name ?? "unknown";
        if (outcome === "approval required") {
          asked.set(tool, [...(asked.get(tool) ?? []), { event, parent: t.span.span_id }]);
        } else if (outcome?.startsWith("approved") || outcome?.startsWith("denied")) {
          const request = asked.get(tool)?.shift();
          spans.push(
            approvalSpan(
              span(
                request?.event ?? event,
                "approval",
                SPAN_NAME.approval,
                "internal",
                request?.parent ?? t.span.span_id,
              ),
              event,
              tool,
            ),
          );
        } else {
          const s = span(event, "tool", SPAN_NAME.executeTool(tool), "internal", t.span.span_id);
          const kind = input.tools?.[tool];
          spans.push(toolSpan(s, event, tool, toolKind(tool, input.tools), capture));
          if (typeof kind === "object") peerAttributes(s, event, kind, input.collaboration_id);
          // A handoff tool's call is the parent of the handoff it asks for.
          if (HANDOFF_TOOL.test(tool)) handoffCalls.set(tool, s);
        }
        break;
      }
      case "handoff": {
        const t = current(event);
        const asked = handoffCalls.get(event.details.tool_name ?? "");
        handoffCalls.delete(event.details.tool_name ?? "");
        const parent = asked?.span_id ?? t.span.span_id;
        const s = handoffSpan(span(event, "handoff", SPAN_NAME.handoff, "internal", parent), event, capture);
        spans.push(s);
        if (asked) {
          asked.end_ns = laterOf(s.end_ns, asked.end_ns);
          if (event.error) fail(asked, event.error);
        }
        if (!event.error) {
          lastHandoff = { span_id: s.span_id, to: event.details.to_agent };
          close(t, isoToNanos(event.timestamp), "handed_off");
          turn = null;
        }
        break;
      }
      case "guardrail": {
        const t = current(event);
        const attributes: Attributes = {
          [GEN_AI.guardrailComponentName]: "relay.output_schema",
          [GEN_AI.guardrailSource]: "output",
          [GEN_AI.guardrailResultType]: "outcome",
          [GEN_AI.guardrailResultValue]: event.details.outcome ?? "unknown",
        };
        if (event.error) attributes[ERROR_TYPE] = event.error;
        mark(t, event, GUARDRAIL_RESULT_EVENT, attributes);
        break;
      }
      case "compaction": {
        const parent = turn?.span.span_id ?? root;
        spans.push(compactionSpan(span(event, "compaction", SPAN_NAME.compaction, "internal", parent), event));
        break;
      }
      case "agent_complete": {
        const t = current(event);
        t.span.links.push(...resumedLinks(event));
        if (event.details.executor) t.executor = event.details.executor;
        close(t, isoToNanos(event.timestamp), "completed");
        turn = null;
        break;
      }
      case "agent_error": {
        const t = current(event);
        t.executor ??= event.details.executor;
        const call = modelSpan(span(event, "llm", "chat", "client", t.span.span_id), event, input.provider);
        fail(call, event.error ?? "_OTHER");
        spans.push(call);
        fail(t.span, event.error ?? "_OTHER");
        close(t, isoToNanos(event.timestamp), "failed");
        turn = null;
        break;
      }
    }
  }
  const still = turn as Turn | null;
  if (server) spans.unshift(coverRun(server, input));
  return { trace_id, spans, open: still ? [still.span.span_id] : [] };
}

/**
 * The A2A server span of the request that started the run (the A2A conventions' `a2a.server`):
 * Relay's task id is the run id and its context id the session id.
 */
function a2aServerSpan(input: RunTraceInput, trace_id: string): Span {
  const a2a = input.a2a!;
  const attributes: Attributes = {
    [A2A.methodName]: a2a.method,
    [A2A.taskId]: input.run_id,
    [A2A.taskState]: a2a.state,
    [GEN_AI.conversationId]: input.session_id,
    [RELAY.runId]: input.run_id,
  };
  if (a2a.message_id) attributes[A2A.messageId] = a2a.message_id;
  return {
    trace_id,
    span_id: derivedSpanId(trace_id, input.run_id, "a2a.server"),
    parent_span_id: input.parent?.span_id ?? null,
    name: a2a.method,
    kind: "server",
    start_ns: "0",
    end_ns: "0",
    attributes,
    events: [],
    links: [],
    status: { code: "unset" },
  };
}

/** A span over the run's events so far (the route that led to it included): from its first to its last. */
function coverRun(s: Span, input: RunTraceInput): Span {
  const own = input.events.filter(
    (e) => e.correlation_id === input.run_id || (e.event_type === "route" && e.correlation_id === input.session_id),
  );
  if (own.length === 0) return s;
  const first = own[0]!;
  s.start_ns = minusMs(isoToNanos(first.timestamp), first.duration_ms);
  s.end_ns = laterOf(isoToNanos(own[own.length - 1]!.timestamp), s.start_ns);
  return s;
}
