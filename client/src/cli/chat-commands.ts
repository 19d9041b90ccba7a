import { STRATEGIES, type Strategy } from "./commands/route.ts";

/**
 * What a line typed in `relay chat` asks for (docs/cli.md, Chat commands). Pure: a line in,
 * a command out; the chat runs it. A line that starts with `/` or `@` is a command, never a
 * message: one that cannot be read is `refused` with a one-line hint and nothing is sent.
 * `//` and `@@` at the start send the line as a message, from its second character.
 */

export type ChatCommand =
  /** A message to the session's current agent (the first one routed, or to `--agent`). */
  | { kind: "message"; text: string }
  | { kind: "quit" }
  | { kind: "help" }
  /** `@auto "…"`: the message routed first, and handed to the agent the router names. */
  | { kind: "auto"; text: string; strategy?: Strategy }
  /** `@<agent> "…"`: the message handed to that agent. */
  | { kind: "to"; agent: string; text: string }
  /** `/agents config routing[.<key> [<value>]]`: the routing configuration, one value, or setting it. */
  | { kind: "config"; key?: string; value?: string }
  /** `/agents route "…"`: the routing analysis, nothing run. */
  | { kind: "route"; text: string; strategy?: Strategy }
  | { kind: "trace" }
  | { kind: "handoff-chain" }
  | { kind: "refused"; message: string };

/** What `/help` prints: each command and what it does. */
export const CHAT_HELP: readonly (readonly [string, string])[] = [
  ["<text>", "a message to the session's agent (the first one is routed)"],
  ['@auto "…" [--strategy=rule|llm]', "route this message, and hand the session to the agent chosen"],
  ['@<agent> "…"', "send this message to that agent (a handoff to it first)"],
  ["/agents config routing", "the tenant's routing configuration, each value with its layer"],
  ["/agents config routing.<key> <value>", "set one routing value (as relay config does)"],
  ['/agents route "…" [--strategy=…]', "the routing analysis of a text: nothing is run"],
  ["/agents trace", "the session's steps, with times and tokens"],
  ["/agents handoff-chain", "the session's handoffs in order, with their reasons"],
  ["/help", "this list"],
  ["/quit, /exit, Ctrl-C", "leave (Ctrl-C while a run streams cancels the run)"],
  ["//…, @@…", "a message that starts with / or @"],
];

const HELP_HINT = "/help lists the commands";
const AGENT = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const QUOTES: Record<string, string> = { '"': '"', "'": "'", "“": "”" };

interface Words {
  /** The words and quoted pieces, in order, joined by one space. */
  text: string;
  /** `--name=value` or `--name value`. */
  options: Map<string, string>;
}

/** The words of a command's arguments; a quoted piece is kept as it was typed. */
function words(rest: string): Words | string {
  const pieces: string[] = [];
  const options = new Map<string, string>();
  let i = 0;
  const skipSpace = () => {
    while (i < rest.length && /\s/.test(rest[i]!)) i++;
  };
  const token = () => {
    const start = i;
    while (i < rest.length && !/\s/.test(rest[i]!)) i++;
    return rest.slice(start, i);
  };
  for (skipSpace(); i < rest.length; skipSpace()) {
    const close = QUOTES[rest[i]!];
    if (close !== undefined) {
      const end = rest.indexOf(close, i + 1);
      if (end < 0) return `a quote is not closed (${rest.slice(i, i + 20)}…)`;
      pieces.push(rest.slice(i + 1, end));
      i = end + 1;
      continue;
    }
    const word = token();
    if (!word.startsWith("--") || word === "--") {
      pieces.push(word);
      continue;
    }
    const eq = word.indexOf("=");
    const name = eq < 0 ? word.slice(2) : word.slice(2, eq);
    skipSpace();
    const value = eq < 0 ? token() : word.slice(eq + 1);
    if (value === "") return `--${name} needs a value`;
    options.set(name, value);
  }
  return { text: pieces.join(" ").trim(), options };
}

/** The text and `--strategy` of `@auto` and `/agents route`; refused for anything else. */
function routed(what: string, rest: string): { text: string; strategy?: Strategy } | string {
  const read = words(rest);
  if (typeof read === "string") return `${what}: ${read}`;
  const strategy = read.options.get("strategy");
  read.options.delete("strategy");
  const [unknown] = read.options.keys();
  if (unknown !== undefined) return `${what} takes --strategy only (got --${unknown})`;
  if (strategy !== undefined && !STRATEGIES.includes(strategy as Strategy))
    return `--strategy is one of ${STRATEGIES.join(", ")} (got ${JSON.stringify(strategy)})`;
  if (read.text === "") return `${what} needs the text: ${what} "…"`;
  return strategy === undefined ? { text: read.text } : { text: read.text, strategy: strategy as Strategy };
}

const refused = (message: string): ChatCommand => ({ kind: "refused", message });

function agentsCommand(rest: string): ChatCommand {
  const [sub = "", ...args] = rest.split(/\s+/).filter(Boolean);
  const after = rest.slice(rest.indexOf(sub) + sub.length).trim();
  switch (sub) {
    case "config": {
      const [key, ...value] = args;
      if (key === undefined || key === "routing") {
        if (value.length > 0) return refused("to set a value name it: /agents config routing.<key> <value>");
        return { kind: "config" };
      }
      if (!key.startsWith("routing.")) return refused(`/agents config shows routing.<key>; got ${JSON.stringify(key)}`);
      return value.length === 0 ? { kind: "config", key } : { kind: "config", key, value: value.join(" ") };
    }
    case "route": {
      const read = routed("/agents route", after);
      return typeof read === "string" ? refused(read) : { kind: "route", ...read };
    }
    case "trace":
    case "handoff-chain":
      if (args.length > 0) return refused(`/agents ${sub} takes nothing after it`);
      return { kind: sub };
    case "":
      return refused(`/agents needs one of config, route, trace, handoff-chain; ${HELP_HINT}`);
    default:
      return refused(`unknown command /agents ${sub}; ${HELP_HINT}`);
  }
}

/** The command a typed line (already trimmed, not empty) asks for. */
export function parseChatLine(line: string): ChatCommand {
  if (line.startsWith("//") || line.startsWith("@@")) return { kind: "message", text: line.slice(1) };
  if (line.startsWith("/")) {
    const [name = "", rest = ""] = line.slice(1).split(/\s+(.*)/s);
    switch (name) {
      case "quit":
      case "exit":
        return { kind: "quit" };
      case "help":
        return { kind: "help" };
      case "agents":
        return agentsCommand(rest);
      default:
        return refused(`unknown command /${name}; ${HELP_HINT} (// sends a message that starts with /)`);
    }
  }
  if (line.startsWith("@")) {
    const [name = "", rest = ""] = line.slice(1).split(/\s+(.*)/s);
    if (name === "auto") {
      const read = routed("@auto", rest);
      return typeof read === "string" ? refused(read) : { kind: "auto", ...read };
    }
    if (!AGENT.test(name))
      return refused(
        `@${name} is not an agent's name (lower-case letters, digits, - and _); @@ sends a message that starts with @`,
      );
    const read = words(rest);
    if (typeof read === "string") return refused(`@${name}: ${read}`);
    if (read.options.size > 0) return refused(`@${name} takes no options; quote a message that starts with --`);
    if (read.text === "") return refused(`@${name} needs a message: @${name} "…"`);
    return { kind: "to", agent: name, text: read.text };
  }
  return { kind: "message", text: line };
}
