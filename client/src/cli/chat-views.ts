import type { RelayClient } from "../client.ts";
import { CHAT_HELP, type ChatCommand } from "./chat-commands.ts";
import { keyOf, printRouting, readRouting, setRouting, settingValue } from "./commands/config.ts";
import { printDecision, routeDecision } from "./commands/route.ts";
import { type Output, table } from "./output.ts";
import { checked, SESSION_AUDIT_RECORD, TRACE_STEP } from "./replies.ts";

/**
 * The in-chat commands that show something and run nothing (docs/cli.md, Chat commands):
 * `/help`, `/agents config`, `/agents route`, `/agents trace`, `/agents handoff-chain`. Each
 * prints short lines, or one JSON object a line with `--json` (`type` saying which).
 */

export type ViewCommand = Extract<ChatCommand, { kind: "help" | "config" | "route" | "trace" | "handoff-chain" }>;

interface Step {
  event_type: string;
  timestamp: string;
  agent_name: string;
  duration_ms: number;
  error: string | null;
  details: {
    model?: string;
    tokens?: { prompt: number; completion: number; total: number };
    tool_name?: string;
    from_agent?: string;
    to_agent?: string;
    routing_method?: string;
    outcome?: string;
  };
}

interface AuditRecord {
  action: string;
  at: string;
  handoff_id?: string | null;
  details: Record<string, unknown>;
}

/** One handoff of a session, as `/agents handoff-chain` shows it. */
export interface ChainLink {
  handoff_id: string;
  from: string;
  to: string | null;
  mode: string;
  /** Where it stands: its last status (`completed`, `failed`, `pending`, …). */
  status: string;
  reason: string | null;
  error_code: string | null;
}

const TRACE = "GET /v1/sessions/{id}/trace";
const AUDIT = "GET /v1/sessions/{id}/audit";

const str = (value: unknown): string | null => (typeof value === "string" ? value : null);

/** The session's handoffs in the order they were asked for, from its audit trail (records oldest first). */
export function chainOf(records: readonly AuditRecord[]): ChainLink[] {
  const links = new Map<string, ChainLink>();
  for (const record of records) {
    if (!record.action.startsWith("handoff.") || !record.handoff_id) continue;
    const d = record.details;
    const link = links.get(record.handoff_id) ?? {
      handoff_id: record.handoff_id,
      from: str(d.source) ?? "?",
      to: null,
      mode: str(d.mode) ?? "transfer",
      status: "initiated",
      reason: null,
      error_code: null,
    };
    // A return learns its target when it is validated; the request's reason is on the first record.
    link.to = str(d.target) ?? link.to;
    link.status = str(d.to) ?? link.status;
    link.reason ??= str(d.reason);
    link.error_code = str(d.error_code) ?? link.error_code;
    links.set(record.handoff_id, link);
  }
  return [...links.values()];
}

/** One handoff as a line: `triage → billing: double charge`, a refused one with its code. */
export function chainLine(link: ChainLink): string {
  const why = link.reason ? `: ${link.reason}` : "";
  const arrow = `${link.from} → ${link.to ?? "(back)"}`;
  if (link.status === "completed") return `${arrow}${why}`;
  return `${arrow} ${link.status}${link.error_code ? ` (${link.error_code})` : ""}${why}`;
}

/** What a step did, in a few words: its model, tool, handoff or route. */
function stepDetail(step: Step): string {
  const d = step.details;
  const done = step.error ? ` ✗ ${step.error}` : d.outcome && step.event_type !== "llm_call" ? `: ${d.outcome}` : "";
  switch (step.event_type) {
    case "llm_call":
      return `${d.model ?? "model"}${done}`;
    case "tool_call":
      return `${d.tool_name ?? "tool"}${done}`;
    case "handoff":
      return `${d.from_agent ?? "?"} → ${d.to_agent ?? "?"}${done}`;
    case "route":
      return `via ${d.routing_method ?? "?"}${done}`;
    default:
      return done.replace(/^: /, "");
  }
}

/** A step's time of day (UTC, to the millisecond), as the trace lists it. */
const clock = (iso: string) => iso.slice(11, 23) || iso;

/** The session's steps, each with its time, agent, duration and tokens, then the totals. */
function printTrace(out: Output, steps: readonly Step[]): void {
  if (steps.length === 0) {
    out.line("no steps yet");
    return;
  }
  table(
    out,
    ["time", "agent", "step", "ms", "tokens", "detail"],
    steps.map((s) => [
      clock(s.timestamp),
      s.agent_name,
      s.event_type,
      String(Math.round(s.duration_ms)),
      s.details.tokens ? `${s.details.tokens.prompt}+${s.details.tokens.completion}` : "",
      stepDetail(s),
    ]),
  );
  const tokens = steps.reduce(
    (sum, s) => ({
      prompt: sum.prompt + (s.details.tokens?.prompt ?? 0),
      completion: sum.completion + (s.details.tokens?.completion ?? 0),
    }),
    { prompt: 0, completion: 0 },
  );
  const ms = steps.reduce((sum, s) => sum + s.duration_ms, 0);
  out.line(
    out.paint(
      "dim",
      `${steps.length} steps, ${Math.round(ms)} ms, ${tokens.prompt + tokens.completion} tokens (${tokens.prompt} in, ${tokens.completion} out)`,
    ),
  );
}

/** Every item of a session's list, each checked for what is printed of it. */
async function listed<T>(
  relay: RelayClient,
  path: "/v1/sessions/{id}/trace" | "/v1/sessions/{id}/audit",
  id: string,
  shape: typeof TRACE_STEP,
  request: string,
): Promise<T[]> {
  const items: T[] = [];
  for await (const item of relay.list(path, { path: { id } })) items.push(checked<T>(item, shape, relay.url, request));
  return items;
}

/** The lines of `/help`. */
function printHelp(out: Output): void {
  const width = Math.max(...CHAT_HELP.map(([usage]) => usage.length));
  for (const [usage, does] of CHAT_HELP) out.line(`  ${usage.padEnd(width)}  ${out.paint("dim", does)}`);
}

/** Runs a view command; `session` is the chat's session, null before the first message. */
export async function showView(
  out: Output,
  relay: RelayClient,
  session: string | null,
  command: ViewCommand,
): Promise<void> {
  switch (command.kind) {
    case "help":
      if (out.json) out.data({ type: "help", commands: CHAT_HELP.map(([usage, does]) => ({ usage, does })) }, true);
      else printHelp(out);
      return;
    case "config": {
      const key = command.key === undefined ? undefined : keyOf(command.key);
      const view =
        key && command.value !== undefined ? await setRouting(relay, key, command.value) : await readRouting(relay);
      if (out.json)
        out.data(
          key
            ? {
                type: "routing_config",
                key: `routing.${key}`,
                value: settingValue(view.config, key),
                source: view.sources[key],
              }
            : { type: "routing_config", ...view },
          true,
        );
      else printRouting(out, view, key ? [key] : undefined);
      return;
    }
    case "route": {
      const decision = await out.spin("routing", routeDecision(relay, command.text, command.strategy));
      if (out.json) out.data({ type: "route_analysis", decision }, true);
      else printDecision(out, decision);
      return;
    }
    case "trace":
    case "handoff-chain":
      if (session === null) {
        if (out.json) out.data({ type: command.kind === "trace" ? "trace" : "handoff_chain", items: [] }, true);
        else out.line("no session yet: the first message starts one");
        return;
      }
      if (command.kind === "trace") {
        const steps = await listed<Step>(relay, "/v1/sessions/{id}/trace", session, TRACE_STEP, TRACE);
        if (out.json) out.data({ type: "trace", items: steps }, true);
        else printTrace(out, steps);
        return;
      }
      {
        const records = await listed<AuditRecord>(
          relay,
          "/v1/sessions/{id}/audit",
          session,
          SESSION_AUDIT_RECORD,
          AUDIT,
        );
        const chain = chainOf(records);
        if (out.json) out.data({ type: "handoff_chain", items: chain }, true);
        else if (chain.length === 0) out.line("no handoffs yet");
        else
          for (const [i, link] of chain.entries())
            out.line(out.paint(link.status === "completed" ? "cyan" : "yellow", `${i + 1}. ${chainLine(link)}`));
      }
      return;
  }
}
