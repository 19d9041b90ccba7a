import type { RelayClient } from "../../client.ts";
import type { RouteDecision } from "../../types.ts";
import type { Command } from "../command.ts";
import { text } from "../command.ts";
import { usage } from "../exit.ts";
import type { Output } from "../output.ts";
import { ROUTE_DECISION, reply } from "../replies.ts";

/** The strategies a route may be asked for (docs/routing.md). */
export const STRATEGIES = ["rule", "llm", "hybrid"] as const;
export type Strategy = (typeof STRATEGIES)[number];

const pct = (n: number) => `${Math.round(n * 10) / 10}%`;

/** Whether the LLM tier was asked, and why (docs/routing.md). */
export function llmTierLine(d: RouteDecision): string {
  if (d.llm) {
    const call = d.llm.tool_call
      ? `called ${d.llm.tool_call.name}`
      : `no agent named${d.llm.error ? ` (${d.llm.error})` : ""}`;
    return `needed: ${d.llm.provider} / ${d.llm.model}, ${d.llm.duration_ms} ms, ${call}`;
  }
  if (d.strategy === "rule") return "not used: the strategy is rule";
  if (d.method === "rule")
    return `not needed: the rule tier's ${pct(d.confidence)} reached the threshold ${d.threshold}`;
  return "not asked";
}

/** The one-line summary chat prints too: `🎯 Routing via rule to billing (100%)`. */
export function routingLine(d: Pick<RouteDecision, "agent" | "method" | "confidence">): string {
  if (!d.agent) return `🎯 No agent fits (${d.method})`;
  const confidence = d.method === "llm" ? "" : ` (${pct(d.confidence)})`;
  return `🎯 Routing via ${d.method} to ${d.agent}${confidence}`;
}

/** The router's decision on `input`, a dry run (`POST /v1/route`), checked for what is printed of it. */
export function routeDecision(relay: RelayClient, input: string, strategy?: Strategy): Promise<RouteDecision> {
  return reply(
    relay,
    relay.api.POST("/v1/route", { body: { input, ...(strategy ? { strategy } : {}) } }),
    ROUTE_DECISION,
    "POST /v1/route",
  );
}

/** The routing analysis of a decision: what `relay route` and chat's `/agents route` print. */
export function printDecision(out: Output, d: RouteDecision): void {
  out.line(out.paint("bold", routingLine(d)));
  const rows: [string, string][] = [
    ["strategy", `${d.strategy}, threshold ${d.threshold}`],
    ["method", d.method],
    ["agent", d.agent ?? "none"],
    [
      "confidence",
      d.method === "llm" ? "none: the LLM tier named the agent" : `${pct(d.confidence)} (score ${d.score})`,
    ],
    ["keywords", d.matched_keywords.join(", ") || "none"],
    ["patterns", d.matched_patterns.join(", ") || "none"],
    ["LLM tier", llmTierLine(d)],
  ];
  if (d.fallback) rows.push(["fallback", `${d.fallback.strategy}: ${d.fallback.reason}`]);
  for (const [label, value] of rows) out.line(`  ${out.paint("dim", label.padEnd(11))} ${value}`);
  if (d.fallback?.agents?.length) {
    out.line(out.paint("dim", "  choose from"));
    for (const a of d.fallback.agents) out.line(`    ${a.name.padEnd(12)} ${a.description}`);
  }
  const candidates = d.candidates.filter((c) => c.confidence > 0 || c.matched_keywords.length > 0);
  if (candidates.length > 0) {
    out.line(out.paint("dim", "  candidates"));
    for (const c of candidates) {
      const matched = [...c.matched_keywords, ...c.matched_patterns].join(", ");
      out.line(
        `    ${c.agent.padEnd(12)} ${pct(c.confidence).padStart(6)}  score ${c.score}${matched ? `  ${matched}` : ""}`,
      );
    }
  }
}

export const route: Command = {
  name: "route",
  summary: "Which agent would take this input, and why (a dry run)",
  usage: "relay route <text…> [--strategy rule|llm|hybrid]",
  options: { strategy: { type: "string", short: "s" } },
  async run(ctx) {
    const input = ctx.positionals.join(" ").trim();
    if (!input) throw usage("route needs the text to route");
    const strategy = text(ctx, "strategy");
    if (strategy !== undefined && !STRATEGIES.includes(strategy as Strategy))
      throw usage(`--strategy must be one of ${STRATEGIES.join(", ")} (got ${JSON.stringify(strategy)})`);
    const decision = await ctx.out.spin("routing", routeDecision(ctx.relay(), input, strategy as Strategy | undefined));
    if (ctx.out.json) ctx.out.data(decision);
    else printDecision(ctx.out, decision);
    return undefined;
  },
};
