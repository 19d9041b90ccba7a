import type { RelayClient } from "../client.ts";
import type { components, operations } from "../types.ts";
import type { AgentFile } from "./commands/agents.ts";
import { REPLAY_REPORT, reply } from "./replies.ts";

/**
 * What pushing agent files would move (docs/cli.md, Agents): the files as a draft replayed
 * against the tenant's routing history (`POST /v1/route/replay`), and its summary in lines.
 */

type Replay = operations["postRouteReplay"];
/** `POST /v1/route/replay`'s answer. */
export type ReplayReport = Replay["responses"][200]["content"]["application/json"];
type Draft = NonNullable<Replay["requestBody"]>["content"]["application/json"]["draft"];

/** The files as a replay's draft: JSON files as definitions, Markdown ones as agent files Relay reads. */
export function draftOf(files: readonly AgentFile[]): Draft {
  const agents: components["schemas"]["AgentDefinition"][] = [];
  const markdown: { name: string; markdown: string }[] = [];
  for (const file of files) {
    if (file.media === "application/json") agents.push(JSON.parse(file.text));
    else markdown.push({ name: file.name, markdown: file.text });
  }
  return { agents, files: markdown, remove: [] };
}

/** Replays the tenant's recorded inputs through its router and the files' draft; changes nothing. */
export function replayFiles(relay: RelayClient, files: readonly AgentFile[]): Promise<ReplayReport> {
  return reply<ReplayReport>(
    relay,
    relay.api.POST("/v1/route/replay", { body: { draft: draftOf(files) } }),
    REPLAY_REPORT,
    "POST /v1/route/replay",
  );
}

const quoted = (examples: readonly string[]) =>
  examples
    .slice(0, 2)
    .map((e) => `“${e.length > 60 ? `${e.slice(0, 59)}…` : e}”`)
    .join(", ");

/** The summary `relay agents push --dry-run` prints. */
export function replayLines(report: ReplayReport): string[] {
  const { totals } = report;
  const source = report.source === "history" ? "recorded inputs" : "inputs";
  const lines = [`replayed ${totals.replayed} of ${totals.inputs} ${source}: ${totals.moved} would move`];
  for (const move of report.moves)
    lines.push(
      `  ${move.from} → ${move.to}: ${move.count}${move.examples.length ? `  e.g. ${quoted(move.examples)}` : ""}`,
    );
  const { entered, left } = report.fallback;
  if (entered.count > 0) lines.push(`  newly to the fallback: ${entered.count}  e.g. ${quoted(entered.examples)}`);
  if (left.count > 0) lines.push(`  newly routed, out of the fallback: ${left.count}  e.g. ${quoted(left.examples)}`);
  const llm = totals.would_ask_llm;
  if (llm.current !== llm.draft)
    lines.push(`  would ask the LLM tier: ${llm.current} now, ${llm.draft} with the files`);
  return lines;
}
