// An agent definition as a Markdown agent file (docs/agents.md, Agent files): YAML front
// matter with the fields, the instructions as the body. Fields left at their defaults are
// left out, as in agents/*.md. Strings that YAML could read as something else are written
// as JSON strings, which YAML reads back unchanged. Pure: no DOM.

/** The definition's defaults (src/schemas/agent.ts); a test holds them to the schema. */
export const DEFAULTS = {
  agent: { description: "", kind: "llm", enabled: true, instructions: "", capabilities: [], handoffs: [] },
  triggers: { keywords: [], patterns: [], examples: [], priority: 50 },
  capability: { proficiency: 1, tags: [] },
  handoff: { when: "manual", include_context: true, requires_approval: false },
  filter: { redact_pii: false, remove_tool_items: false, history: "full" },
  tools: { allow: [] },
  confirmation: { require: [], timeout_s: 300 },
  guardrails: { on_failure: "reject" },
};

/** Field order in the file; fields not listed here follow, so nothing is lost. */
const ORDER = [
  "name",
  "title",
  "description",
  "kind",
  "enabled",
  "model",
  "endpoint",
  "signing",
  "timeout_s",
  "max_concurrent_sessions",
  "triggers",
  "capabilities",
  "handoffs",
  "tools",
  "guardrails",
];

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** The object without the entries equal to `defaults`; undefined when nothing is left. */
function withoutDefaults(value, defaults) {
  const kept = Object.entries(value ?? {}).filter(
    ([k, v]) => v !== undefined && !(k in defaults && same(v, defaults[k])),
  );
  return kept.length === 0 ? undefined : Object.fromEntries(kept);
}

/** The fields worth writing: defaults dropped, a handoff with nothing but a target written as its name. */
export function essentials(definition) {
  const handoffs = (definition.handoffs ?? []).map((entry) => {
    const filter = withoutDefaults(entry.filter, DEFAULTS.filter);
    const rest = withoutDefaults({ ...entry, filter: undefined }, DEFAULTS.handoff);
    const kept = { ...rest, ...(entry.filter ? { filter: filter ?? {} } : {}) };
    return Object.keys(kept).length === 1 ? entry.to : kept;
  });
  const tools = definition.tools && {
    ...withoutDefaults({ allow: definition.tools.allow }, DEFAULTS.tools),
    ...(definition.tools.confirmation && withoutDefaults(definition.tools.confirmation, DEFAULTS.confirmation)
      ? { confirmation: withoutDefaults(definition.tools.confirmation, DEFAULTS.confirmation) }
      : {}),
  };
  const fields = {
    ...definition,
    triggers: withoutDefaults(definition.triggers, DEFAULTS.triggers),
    capabilities: (definition.capabilities ?? []).map((c) => ({
      name: c.name,
      ...withoutDefaults(c, DEFAULTS.capability),
    })),
    handoffs,
    tools: tools && Object.keys(tools).length > 0 ? tools : undefined,
    guardrails: definition.guardrails && (withoutDefaults(definition.guardrails, DEFAULTS.guardrails) ?? {}),
  };
  // The kind is written even when it is the default: it is the first thing a reader asks.
  return { ...withoutDefaults(fields, DEFAULTS.agent), kind: definition.kind ?? DEFAULTS.agent.kind };
}

const RESERVED = /^(true|false|null|yes|no|on|off|y|n|~)$/i;
/** Plain in a flow list (`[a, b]`): words, spaces and a little punctuation, never `,[]{}`. */
const FLOW_PLAIN = /^[\p{L}_][\p{L}\p{N}_ .\-/]*$/u;
/** Plain in a block: starts with a letter, one line of printable text. */
const BLOCK_PLAIN = /^[\p{L}_][^\p{Cc}\u2028\u2029\ufeff]*$/u;
/** What would end a plain scalar early: a `: ` (a key), a ` #` (a comment), a final `:`. */
const BREAKS = /: |\s#|:$/;
const KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** A string as YAML reads it back: plain when that is safe, else a JSON string (which YAML also reads). */
export function scalar(value, flow = false) {
  if (typeof value !== "string") return value === undefined ? "null" : JSON.stringify(value);
  const plain = flow ? FLOW_PLAIN.test(value) : BLOCK_PLAIN.test(value) && !BREAKS.test(value);
  if (plain && value === value.trim() && !RESERVED.test(value)) return value;
  // JSON leaves these raw; YAML wants them escaped.
  return JSON.stringify(value).replace(
    /[\u007f-\u009f\u2028\u2029\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

const key = (k) => (KEY.test(k) && !RESERVED.test(k) ? k : scalar(k));
const isScalar = (v) => v === null || typeof v !== "object";

/** Block YAML lines for one mapping entry. Free-form objects (JSON Schemas) are written as JSON, which YAML reads. */
function entry(name, value, indent, free) {
  const pad = " ".repeat(indent);
  if (isScalar(value)) return [`${pad}${key(name)}: ${scalar(value)}`];
  if (free.has(name)) return [`${pad}${key(name)}: ${JSON.stringify(value)}`];
  if (Array.isArray(value)) {
    if (value.length === 0) return [`${pad}${key(name)}: []`];
    const flow = value.every(isScalar) ? `[${value.map((v) => scalar(v, true)).join(", ")}]` : null;
    if (flow && flow.length + indent + name.length <= 100) return [`${pad}${key(name)}: ${flow}`];
    return [`${pad}${key(name)}:`, ...value.flatMap((item) => listItem(item, indent + 2, free))];
  }
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return [`${pad}${key(name)}: {}`];
  return [`${pad}${key(name)}:`, ...entries.flatMap(([k, v]) => entry(k, v, indent + 2, free))];
}

function listItem(item, indent, free) {
  const pad = " ".repeat(indent);
  if (isScalar(item)) return [`${pad}- ${scalar(item)}`];
  if (Array.isArray(item)) return [`${pad}- ${JSON.stringify(item)}`];
  const lines = Object.entries(item)
    .filter(([, v]) => v !== undefined)
    .flatMap(([k, v]) => entry(k, v, indent + 2, free));
  if (lines.length === 0) return [`${pad}- {}`];
  return [`${pad}- ${lines[0].slice(indent + 2)}`, ...lines.slice(1)];
}

/** Fields whose value is any JSON: written as JSON. */
const FREE_FORM = new Set(["input_schema", "output_schema"]);

/**
 * The definition as a Markdown agent file: what `PUT /v1/agents/:name` with
 * `Content-Type: text/markdown` and the agent-file pushers read back as the same definition.
 */
export function agentMarkdown(definition) {
  const fields = essentials(definition);
  const instructions = fields.instructions;
  // The body is read trimmed: instructions with surrounding blanks stay in the front matter.
  const inBody = typeof instructions === "string" && instructions.length > 0 && instructions === instructions.trim();
  const names = [...ORDER, ...Object.keys(fields).filter((k) => !ORDER.includes(k) && k !== "instructions")];
  if (!inBody && instructions !== undefined) names.push("instructions");
  const lines = names.filter((k) => fields[k] !== undefined).flatMap((k) => entry(k, fields[k], 0, FREE_FORM));
  return `---\n${lines.join("\n")}\n---\n${inBody ? `${instructions}\n` : ""}`;
}
