import { type HistoryItem, isKnownLiveEvent, type LiveEvent, type RunSummary, type TraceEvent } from "../types.ts";
import type { Style } from "./output.ts";

/**
 * Live events as the lines `relay chat` and `relay tail` print (docs/runs.md, Live events).
 * Pure: an event in, a line and its style out, or null for what the mode leaves out. An
 * event type this client does not know is shown by its name rather than dropped. The
 * commands check each event before it gets here (checkedEvent in replies.ts), so its data
 * is what the type says.
 */

export type RenderMode = "chat" | "tail";

export interface Line {
  text: string;
  style?: Style;
}

const MAX_ARGS = 80;

/** After an answer cut short (a cancelled run, a broken stream): what was written is kept, and said to be cut. */
export const CUT_MARK = " ✂ cut";

function short(value: unknown, max = MAX_ARGS): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  if (text === undefined) return "";
  const line = text.replace(/\s+/g, " ");
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

const pct = (n: number) => `${Math.round(n * 10) / 10}%`;

function traceLine(type: string, t: TraceEvent, mode: RenderMode): Line | null {
  const d = t.details;
  switch (type) {
    case "route":
      return {
        text: `🎯 Routing via ${d.routing_method ?? "?"} to ${t.agent_name}${d.routing_confidence === undefined ? "" : ` (${pct(d.routing_confidence)})`}`,
        style: "cyan",
      };
    case "handoff": {
      const failed = t.error !== null || (d.outcome !== undefined && d.outcome !== "completed");
      const why = d.handoff_reason ? `: ${d.handoff_reason}` : "";
      return failed
        ? { text: `↪ ${d.from_agent} → ${d.to_agent} refused${t.error ? ` (${t.error})` : ""}${why}`, style: "yellow" }
        : { text: `↪ ${d.from_agent} → ${d.to_agent}${why}`, style: "cyan" };
    }
    case "tool_call":
      // Handoff tools are shown by their handoff event.
      if (d.tool_name && /^(transfer_to_|return_to_)/.test(d.tool_name)) return null;
      return {
        text: `⚙ ${t.agent_name} called ${d.tool_name ?? "a tool"}(${short(d.tool_args ?? "", 60)})${t.error ? ` → ${t.error}` : d.outcome ? `: ${d.outcome}` : ""}`,
        style: t.error ? "yellow" : "dim",
      };
    case "agent_error":
      return { text: `✗ ${t.agent_name}: ${t.error ?? d.outcome ?? "error"}`, style: "red" };
    case "guardrail":
      return { text: `🛡 guardrail: ${d.outcome ?? "checked"}`, style: d.outcome === "passed" ? "dim" : "yellow" };
    case "agent_started":
      return mode === "tail" ? { text: `· ${t.agent_name} started`, style: "dim" } : null;
    case "agent_completed":
      return mode === "tail" ? { text: `· ${t.agent_name} done`, style: "dim" } : null;
    case "llm_call":
      return mode === "tail"
        ? { text: `· ${t.agent_name} asked ${d.model ?? "the model"} (${t.duration_ms} ms)`, style: "dim" }
        : null;
    default:
      return null;
  }
}

function messageLine(m: HistoryItem, mode: RenderMode): Line | null {
  if (m.role === "assistant" && (m.type ?? "message") === "message" && m.content)
    return m.cut
      ? { text: `${m.agent ?? "agent"}: ${m.content}${CUT_MARK}`, style: "yellow" }
      : { text: `${m.agent ?? "agent"}: ${m.content}` };
  if (mode !== "tail") return null;
  if (m.role === "user") return { text: `you: ${m.content}`, style: "bold" };
  if (m.type === "tool_output") return { text: `  ↳ ${m.tool_name ?? "tool"}: ${short(m.content)}`, style: "dim" };
  return null;
}

function pausedLine(run: RunSummary): string {
  const p = run.pending;
  if (!p) return `⏸ the run waits (${run.status})`;
  if (p.kind === "human")
    return p.tool_call_id === null
      ? `⏸ ${p.agent} (a person) holds the turn: inbox item ${p.inbox_id}`
      : `⏸ ${p.agent} asked a person: inbox item ${p.inbox_id}`;
  if (p.kind === "approval") return `⏸ waiting for approval of ${p.approvals.map((a) => a.tool_call.name).join(", ")}`;
  if (p.kind === "input") return `⏸ ${p.agent} (a remote agent) waits for the next message`;
  return `⏸ waiting for the client's tool outputs: ${p.tool_calls.map((c) => c.name).join(", ")}`;
}

/** The line for one event, or null when the mode leaves it out. */
export function eventLine(event: LiveEvent, mode: RenderMode): Line | null {
  if (!isKnownLiveEvent(event))
    // A type newer than this client: say it happened.
    return { text: `· ${event.type}${typeof event.data === "string" ? ` ${short(event.data)}` : ""}`, style: "dim" };
  switch (event.type) {
    case "route":
    case "handoff":
    case "tool_call":
    case "agent_error":
    case "guardrail":
    case "agent_started":
    case "agent_completed":
    case "llm_call":
      return traceLine(event.type, event.data, mode);
    case "compaction":
      return { text: `· ${event.type}`, style: "dim" };
    case "message":
      return messageLine(event.data, mode);
    case "approval_required":
      return mode === "tail" ? { text: `✋ ${event.data.prompt ?? "an approval is needed"}`, style: "yellow" } : null;
    case "run_paused":
      return mode === "tail" ? { text: pausedLine(event.data), style: "yellow" } : null;
    case "run_failed": {
      const error = event.data.error;
      return {
        text: `✗ the run failed: ${error ? `${error.code}: ${error.message}` : "no reason given"}`,
        style: "red",
      };
    }
    case "message.delta":
      // Pieces are written as they come by the chat itself; a tail shows the whole message.
      return null;
    case "message.retracted":
      return { text: `⟲ ${event.data.agent}'s answer was withdrawn (${event.data.code})`, style: "yellow" };
    case "run_cancelled":
      return { text: "✗ the run was cancelled", style: "red" };
    case "run_started":
    case "run_resumed":
    case "run_completed":
      return mode === "tail" ? { text: `· run ${event.type.slice(4)}`, style: "dim" } : null;
    case "handoff_status": {
      if (mode !== "tail") return null;
      const h = event.data;
      const why = h.error_code ? ` (${h.error_code})` : h.reason ? `: ${h.reason}` : "";
      return { text: `⇄ handoff ${h.source ?? "?"} → ${h.target ?? "?"} ${h.status ?? h.action}${why}`, style: "dim" };
    }
  }
}
