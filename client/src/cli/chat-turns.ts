import { RelayApiError } from "../errors.ts";
import type { RouteDecision } from "../types.ts";
import type { Context } from "./command.ts";
import { routeDecision, routingLine, type Strategy } from "./commands/route.ts";
import { CliError, cliErrorOf, EXIT, failureLine } from "./exit.ts";
import { HANDOFF, RUN, reply, SESSION } from "./replies.ts";

/**
 * The calls `relay chat` makes around a message (docs/cli.md, Chat): the session a first
 * message starts, the router's pick for `@auto`, a handoff to the agent a message is for, and
 * cancelling a run on Ctrl-C.
 */

/**
 * A session for a first message, with `agent`, or else the router's choice (`strategy`: the
 * one asked for); when nothing fits, the fallback's agents are shown and the next line names
 * one. The session's id, or null when input ended before an agent was named.
 */
export async function startSession(
  ctx: Context,
  input: string,
  agent: string | undefined,
  strategy: Strategy | undefined,
): Promise<string | null> {
  const { out } = ctx;
  const relay = ctx.relay();
  let route: { method: string; confidence: number } | undefined;
  if (!agent) {
    const decision = await out.spin("routing", routeDecision(relay, input, strategy));
    if (out.json) out.data({ type: "route", decision }, true);
    else out.line(out.paint("cyan", routingLine(decision)));
    agent = decision.agent ?? undefined;
    route = { method: decision.method, confidence: decision.confidence };
    if (!agent) {
      const names = (decision.fallback?.agents ?? []).map((a) => a.name);
      if (!out.json)
        out.line(
          `${decision.fallback?.reason ?? "No agent fits."}${names.length ? ` Choose one of: ${names.join(", ")}` : ""}`,
        );
      const chosen = (await ctx.readLine("agent> "))?.trim();
      if (!chosen) return null;
      agent = chosen;
      route = { method: "user", confidence: 100 };
    }
  }
  const session = await reply(
    relay,
    relay.api.POST("/v1/sessions", {
      body: { agent, metadata: { client: "relay chat", ...(route ? { route } : {}) } },
    }),
    SESSION,
    "POST /v1/sessions",
  );
  if (out.json) out.data({ type: "session", session }, true);
  else out.note(out.paint("dim", `session ${session.id} with ${session.current_agent}`));
  return session.id;
}

/**
 * The router's decision on `content`, printed as chat prints a first message's; a refusal
 * (`NO_ROUTE`, exit 1) when nothing fits, naming the agents to choose from.
 */
export async function routed(
  ctx: Context,
  content: string,
  strategy: Strategy | undefined,
): Promise<RouteDecision & { agent: string }> {
  const { out } = ctx;
  const decision = await out.spin("routing", routeDecision(ctx.relay(), content, strategy));
  if (out.json) out.data({ type: "route", decision }, true);
  else out.line(out.paint("cyan", routingLine(decision)));
  const agent = decision.agent;
  if (!agent) {
    const names = (decision.fallback?.agents ?? []).map((a) => a.name);
    const choose = names.length ? `: ${names.join(", ")}` : "";
    throw new CliError(
      `${decision.fallback?.reason ?? "no agent fits"}; nothing was sent. Name one with @<agent> "…"${choose}`,
      EXIT.FAILED,
      "NO_ROUTE",
    );
  }
  return { ...decision, agent };
}

/**
 * Hands the session to `target` unless it holds it already (`POST /v1/handoffs` from the
 * current agent, validated as any handoff is: a refusal is thrown, its code the API's).
 */
export async function handOff(ctx: Context, sessionId: string, target: string, reason: string): Promise<void> {
  const { out } = ctx;
  const relay = ctx.relay();
  const session = await reply(
    relay,
    relay.api.GET("/v1/sessions/{id}", { params: { path: { id: sessionId } } }),
    SESSION,
    "GET /v1/sessions/{id}",
  );
  const source = session.current_agent;
  if (!source || source === target) return;
  const handoff = await reply(
    relay,
    relay.api.POST("/v1/handoffs", {
      body: { session_id: sessionId, source_agent: source, target_agent: target, reason },
    }),
    HANDOFF,
    "POST /v1/handoffs",
  );
  if (out.json) out.data({ type: "handoff", handoff }, true);
  else {
    // An immediate handoff answers completed or refused; any other status is said as it is.
    const status = handoff.status === "completed" ? "" : ` ${handoff.status}`;
    out.line(out.paint("cyan", `↪ ${source} → ${target}${status}: ${reason}`));
  }
}

/**
 * Cancels a run (`POST /v1/sessions/:id/runs/:run_id/cancel`). Nothing is thrown, since the
 * run's stream goes on to its end: a run that ended meanwhile needs no cancelling, and any
 * other failure is said on stderr.
 */
export async function cancelRun(ctx: Context, sessionId: string, runId: string): Promise<void> {
  const { out } = ctx;
  const relay = ctx.relay();
  out.note(out.paint("dim", "cancelling the run (Ctrl-C again leaves)"));
  try {
    await reply(
      relay,
      relay.api.POST("/v1/sessions/{id}/runs/{run_id}/cancel", { params: { path: { id: sessionId, run_id: runId } } }),
      RUN,
      "POST /v1/sessions/{id}/runs/{run_id}/cancel",
    );
  } catch (error) {
    if (error instanceof RelayApiError && error.code === "RUN_NOT_CANCELLABLE") return;
    out.error(out.paint("red", failureLine(cliErrorOf(error))));
  }
}
