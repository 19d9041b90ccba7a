import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, extname, join, resolve } from "node:path";
import { unwrap } from "../../client.ts";
import { RelayApiError } from "../../errors.ts";
import type { Agent } from "../../types.ts";
import { replayFiles, replayLines } from "../agent-replay.ts";
import { type Command, type Context, flag, text } from "../command.ts";
import { CliError, CODE, cliErrorOf, EXIT, type ExitCode, oneLine, usage } from "../exit.ts";
import { table } from "../output.ts";
import { AGENT, checked, reply } from "../replies.ts";

/** One agent file to push: Markdown with YAML front matter, or JSON (docs/agents.md, Agent files). */
export interface AgentFile {
  path: string;
  name: string;
  media: "text/markdown" | "application/json";
  text: string;
}

/** The agent name a file defines: `name:` in the front matter, or the JSON's `name`. */
export function agentNameOf(text: string, media: AgentFile["media"]): string | null {
  if (media === "application/json") {
    try {
      const name = (JSON.parse(text) as { name?: unknown }).name;
      return typeof name === "string" && name !== "" ? name : null;
    } catch {
      return null;
    }
  }
  const front = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---/.exec(text)?.[1];
  const name = front ? /^name:\s*["']?([^"'#\r\n]+?)["']?\s*(?:#.*)?$/m.exec(front)?.[1] : undefined;
  return name ?? null;
}

/**
 * The files named (folders: their `*.md` and `*.json`, in name order), read and named. Every
 * problem is listed and nothing is sent unless all files are usable; Relay checks each
 * definition itself when it arrives.
 */
export function readAgentFiles(paths: readonly string[], cwd: string): AgentFile[] {
  const files: string[] = [];
  const problems: string[] = [];
  for (const typed of paths) {
    const path = resolve(cwd, typed);
    try {
      if (statSync(path).isDirectory()) {
        const inside = readdirSync(path)
          .filter((f) => f.endsWith(".md") || f.endsWith(".json"))
          .sort()
          .map((f) => join(path, f));
        if (inside.length === 0) problems.push(`${typed}: no agent files (*.md, *.json) in this folder`);
        files.push(...inside);
      } else files.push(path);
    } catch (error) {
      problems.push(`${typed}: ${(error as { code?: string }).code ?? (error as Error).message}`);
    }
  }
  const agents: AgentFile[] = [];
  const seen = new Map<string, string>();
  for (const path of files) {
    const ext = extname(path);
    if (ext !== ".md" && ext !== ".json") {
      problems.push(`${basename(path)}: not an agent file (.md or .json)`);
      continue;
    }
    const media = ext === ".md" ? "text/markdown" : "application/json";
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      problems.push(`${basename(path)}: cannot be read (${(error as { code?: string }).code ?? error})`);
      continue;
    }
    const name = agentNameOf(text, media);
    if (!name) {
      problems.push(
        `${basename(path)}: no agent name (${media === "text/markdown" ? "front matter name:" : '"name"'})`,
      );
      continue;
    }
    if (seen.has(name)) problems.push(`${basename(path)}: defines ${name} again (${basename(seen.get(name)!)})`);
    seen.set(name, path);
    agents.push({ path, name, media, text });
  }
  if (problems.length > 0)
    throw new CliError(
      `nothing sent: ${problems.length === 1 ? "a file" : `${problems.length} files`} cannot be used`,
      EXIT.FAILED,
      CODE.INVALID_AGENT_FILES,
      { details: { problems }, more: problems.map((p) => `  ${p}`).join("\n") },
    );
  return agents;
}

export interface PushOutcome {
  file: string;
  name: string;
  outcome: "created" | "replaced" | "failed";
  status: number;
  error?: { code: string; message: string };
}

/**
 * PUTs each file as it is (Relay parses and checks it) and reports each outcome; a refused
 * file does not stop the others. No answer at all stops the push.
 */
export async function pushAgentFiles(
  ctx: Pick<Context, "relay" | "out">,
  files: readonly AgentFile[],
  report: (outcome: PushOutcome) => void,
): Promise<PushOutcome[]> {
  const relay = ctx.relay();
  const outcomes: PushOutcome[] = [];
  for (const file of files) {
    const call = relay.api.PUT("/v1/agents/{name}", {
      params: { path: { name: file.name } },
      // The file goes as written: Relay reads Markdown front matter itself.
      // biome-ignore lint/suspicious/noExplicitAny: the generated body type is the JSON form.
      body: file.text as any,
      bodySerializer: (body: unknown) => body as string,
      headers: { "Content-Type": file.media },
    });
    let outcome: PushOutcome;
    try {
      let status = 0;
      await unwrap(
        call.then((answer) => {
          status = answer.response.status;
          return answer;
        }),
        relay.url,
      );
      outcome = { file: file.path, name: file.name, outcome: status === 201 ? "created" : "replaced", status };
    } catch (error) {
      if (!(error instanceof RelayApiError)) {
        const cli = cliErrorOf(error);
        throw new CliError(
          `${file.name}: ${cli.message}; stopped with ${outcomes.length} of ${files.length} sent`,
          cli.exitCode,
          cli.code,
        );
      }
      outcome = {
        file: file.path,
        name: file.name,
        outcome: "failed",
        status: error.status,
        error: { code: error.code, message: error.message },
      };
    }
    outcomes.push(outcome);
    report(outcome);
  }
  return outcomes;
}

function printAgent(ctx: Context, agent: Agent): void {
  const d = agent.definition;
  const rows: [string, string][] = [
    ["name", d.name],
    ["title", d.title ?? ""],
    ["kind", `${d.kind}${d.enabled === false ? " (disabled)" : ""}`],
    ["description", d.description ?? ""],
    ["keywords", (d.triggers?.keywords ?? []).join(", ")],
    [
      "handoffs",
      ((d.handoffs ?? []) as unknown[]).map((h) => (typeof h === "string" ? h : (h as { to: string }).to)).join(", "),
    ],
    ["tools", (d.tools?.allow ?? []).join(", ")],
    ["updated", agent.updated_at],
  ];
  for (const [label, value] of rows) if (value) ctx.out.line(`${ctx.out.paint("dim", label.padEnd(12))} ${value}`);
  if (d.instructions) ctx.out.line(`\n${d.instructions}`);
}

const SUBCOMMANDS = ["ls", "get", "push", "rm"] as const;

export const agents: Command = {
  name: "agents",
  summary: "List, show, push (create or replace) and delete agents",
  usage: [
    "relay agents ls                       the tenant's agents",
    "relay agents get <name>               one agent's definition",
    "relay agents push <file|folder…>      create or replace agents from Markdown or JSON files",
    "  --dry-run                           push nothing: replay the routing history against the files",
    "  --max-moved <n>                     push only if the replay moves at most n recorded inputs",
    "relay agents rm <name…>               delete agents",
  ].join("\n"),
  options: { "dry-run": { type: "boolean" }, "max-moved": { type: "string" } },
  async run(ctx) {
    const [sub, ...args] = ctx.positionals;
    if (!sub || !(SUBCOMMANDS as readonly string[]).includes(sub))
      throw usage(sub ? `unknown agents command "${sub}"` : "agents needs ls, get, push or rm");
    const relay = ctx.relay();
    if (sub === "ls") {
      if (args.length > 0) throw usage("agents ls takes no arguments");
      const all: Agent[] = [];
      for await (const agent of relay.list("/v1/agents", { query: { limit: 200 } }))
        all.push(checked<Agent>(agent, AGENT, relay.url, "GET /v1/agents", `item ${all.length + 1}`));
      if (ctx.out.json) ctx.out.data(all);
      else
        table(
          ctx.out,
          ["name", "kind", "enabled", "title"],
          all.map((a) => [
            a.definition.name,
            a.definition.kind,
            String(a.definition.enabled !== false),
            a.definition.title ?? "",
          ]),
        );
      return undefined;
    }
    if (sub === "get") {
      if (args.length !== 1) throw usage("agents get takes one name");
      const agent = await reply(
        relay,
        relay.api.GET("/v1/agents/{name}", { params: { path: { name: args[0]! } } }),
        AGENT,
        "GET /v1/agents/{name}",
      );
      if (ctx.out.json) ctx.out.data(agent);
      else printAgent(ctx, agent);
      return undefined;
    }
    if (sub === "push") {
      if (args.length === 0) throw usage("agents push needs files or folders");
      const files = readAgentFiles(args, ctx.cwd);
      const maxMoved = maxMovedOf(text(ctx, "max-moved"));
      if (flag(ctx, "dry-run") || maxMoved !== null) {
        const report = await replayFiles(relay, files);
        const over = maxMoved !== null && report.totals.moved > maxMoved;
        if (flag(ctx, "dry-run") || over) {
          if (ctx.out.json) ctx.out.data(report);
          else for (const line of replayLines(report)) ctx.out.line(line);
        }
        if (over)
          throw new CliError(
            `nothing pushed: the files would move ${report.totals.moved} recorded input${report.totals.moved === 1 ? "" : "s"}, more than --max-moved ${maxMoved}`,
            EXIT.FAILED,
            CODE.TOO_MANY_MOVED,
            { details: { moved: report.totals.moved, max_moved: maxMoved } },
          );
        if (flag(ctx, "dry-run")) return undefined;
      }
      const outcomes = await pushAgentFiles(ctx, files, (o) => {
        if (ctx.out.json) return;
        if (o.error)
          ctx.out.error(`${o.name}: ${oneLine(o.error.code)}: ${oneLine(o.error.message)} (HTTP ${o.status})`);
        else ctx.out.line(`${o.name}: ${o.outcome}`);
      });
      if (ctx.out.json) ctx.out.data(outcomes);
      return outcomes.some((o) => o.error) ? EXIT.FAILED : undefined;
    }
    if (args.length === 0) throw usage("agents rm needs names");
    let worst: ExitCode | undefined;
    const removed: string[] = [];
    for (const name of args) {
      try {
        await unwrap(relay.api.DELETE("/v1/agents/{name}", { params: { path: { name } } }), relay.url);
        removed.push(name);
        if (!ctx.out.json) ctx.out.line(`${name}: deleted`);
      } catch (error) {
        // A refusal is this name's; anything else (no answer, one that cannot be read) stops the rest.
        if (!(error instanceof RelayApiError) || error.status >= 500) throw error;
        const cli = cliErrorOf(error);
        ctx.out.error(`${name}: ${oneLine(cli.code)}: ${oneLine(cli.message)}`);
        worst ??= cli.exitCode;
      }
    }
    if (ctx.out.json) ctx.out.data({ deleted: removed });
    return worst;
  },
};

/** `--max-moved`'s value: a whole number of inputs (null: not given). */
function maxMovedOf(typed: string | undefined): number | null {
  if (typed === undefined) return null;
  const n = Number(typed);
  if (!/^\d+$/.test(typed.trim()) || !Number.isSafeInteger(n))
    throw usage(`--max-moved is a whole number (got ${JSON.stringify(typed)})`);
  return n;
}
