import * as z from "zod";
import { err, ok, type Result } from "../errors";
import { issuesOf } from "../errors/issues";
import type { ToolSpec } from "../providers/types";
import { MEMORY_LIMITS, MemoryFact, MemoryKey, MemoryValue, type MemoryView } from "../schemas/memory";

/**
 * A session's memory of facts (docs/memory.md, Facts), pure: the `remember` and `forget`
 * tools an agent with `memory.facts` is offered, what one of their calls asks and answers,
 * the facts after a change within the memory's bounds, and the prompt section every agent
 * gets. The session's object stores the facts; the run loop and the API call these.
 */

export const REMEMBER_TOOL = "remember";
export const FORGET_TOOL = "forget";

/** The key's JSON Schema from MemoryKey, so the model is told the rule the call is checked by. */
function keyParameter(description: string): Record<string, unknown> {
  const { pattern } = z.toJSONSchema(MemoryKey) as { pattern: string };
  return { type: "string", pattern, maxLength: MEMORY_LIMITS.key_chars, description };
}

/** The two tools' specs, in the OpenAI function shape every provider takes. */
export function factToolSpecs(): ToolSpec[] {
  const key = keyParameter("A short name for the fact: letters, digits, '_', '.' or '-' (customer_name, order.id).");
  return [
    {
      type: "function",
      function: {
        name: REMEMBER_TOOL,
        description:
          "Record a fact worth keeping for the whole conversation (a name, an id, a decision, a preference). " +
          "Every agent of this conversation sees its facts in its instructions from the next turn on, " +
          "however long the conversation grows. Remembering a key again replaces its value.",
        parameters: {
          type: "object",
          properties: {
            key,
            value: {
              type: "string",
              maxLength: MEMORY_LIMITS.value_chars,
              description: `The fact, in a sentence or less (at most ${MEMORY_LIMITS.value_chars} characters).`,
            },
          },
          required: ["key", "value"],
          additionalProperties: false,
        },
      },
    },
    {
      type: "function",
      function: {
        name: FORGET_TOOL,
        description: "Forget a fact recorded earlier that is no longer true or needed.",
        parameters: {
          type: "object",
          properties: { key: { ...key, description: "The key of the fact to forget." } },
          required: ["key"],
          additionalProperties: false,
        },
      },
    },
  ];
}

/** What a call, or a person through the API, asks of the memory. */
export type FactChange = { kind: "put"; key: string; value: string } | { kind: "delete"; key: string };

/** The characters the facts take against `MEMORY_LIMITS.total_chars`: keys and values. */
export function memoryChars(facts: readonly Pick<MemoryFact, "key" | "value">[]): number {
  return facts.reduce((sum, fact) => sum + fact.key.length + fact.value.length, 0);
}

/** `GET /v1/sessions/:id/memory`: the facts by key, and how full the memory is. */
export function memoryView(facts: readonly MemoryFact[]): MemoryView {
  return {
    facts: [...facts],
    chars: memoryChars(facts),
    limits: {
      facts: MEMORY_LIMITS.facts,
      value_chars: MEMORY_LIMITS.value_chars,
      total_chars: MEMORY_LIMITS.total_chars,
    },
  };
}

/**
 * A remember/forget call's JSON arguments checked against the current facts and the bounds:
 * the change and the output the model sees, or an error output the model sees (not JSON,
 * a bad key, a value too long, the memory full, an unknown key to forget). Never throws;
 * an error output quotes no value, only keys and limits.
 */
export function factCall(
  name: string,
  argumentsJson: string,
  facts: readonly MemoryFact[],
): { ok: true; change: FactChange; output: string } | { ok: false; output: string } {
  if (name !== REMEMBER_TOOL && name !== FORGET_TOOL)
    return { ok: false, output: `Error: '${name}' is not a memory tool (${REMEMBER_TOOL}, ${FORGET_TOOL}).` };
  let args: unknown;
  try {
    args = JSON.parse(argumentsJson || "{}");
  } catch {
    return { ok: false, output: `Error: the ${name} call's arguments are not JSON.` };
  }
  const fields =
    args !== null && typeof args === "object" && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  const key = MemoryKey.safeParse(fields.key);
  if (!key.success)
    return {
      ok: false,
      output: `Error: 'key' must be a string of letters, digits, '_', '.' or '-', at most ${MEMORY_LIMITS.key_chars} characters, starting with a letter or digit.`,
    };
  if (name === FORGET_TOOL) {
    if (!facts.some((fact) => fact.key === key.data))
      return { ok: false, output: `Error: there is no fact '${key.data}' to forget.` };
    return { ok: true, change: { kind: "delete", key: key.data }, output: `Forgot '${key.data}'.` };
  }
  const value = MemoryValue.safeParse(fields.value);
  if (!value.success)
    return {
      ok: false,
      output: `Error: 'value' must be a string of 1 to ${MEMORY_LIMITS.value_chars} characters (not only spaces).`,
    };
  // Checked as applyFactChange checks it; the writer and time do not count against the bounds.
  const after = withFact(facts, { key: key.data, value: value.data, agent: null, updated_at: "" });
  const full = overBounds(after, key.data);
  if (full) return { ok: false, output: `Error: ${full.message}` };
  return {
    ok: true,
    change: { kind: "put", key: key.data, value: value.data },
    output: `Remembered '${key.data}' (${after.length} of ${MEMORY_LIMITS.facts} facts, ${memoryChars(after)} of ${MEMORY_LIMITS.total_chars} characters).`,
  };
}

/**
 * The facts, by key, after a change written by `agent` (null: a person through the API) at
 * `now`: VALIDATION_FAILED for a bad key or value, MEMORY_FULL past the bounds (the count of
 * facts, or the characters of keys and values; a key written again counts its new value
 * only), NOT_FOUND for deleting a key the memory does not hold.
 */
export function applyFactChange(
  facts: readonly MemoryFact[],
  change: FactChange,
  agent: string | null,
  now: number,
): Result<MemoryFact[]> {
  if (change.kind === "delete") {
    if (!facts.some((fact) => fact.key === change.key))
      return err("NOT_FOUND", `No fact '${change.key}' in the session's memory.`, { key: change.key });
    return ok(facts.filter((fact) => fact.key !== change.key));
  }
  const parsed = MemoryFact.safeParse({
    key: change.key,
    value: change.value,
    agent,
    updated_at: new Date(now).toISOString(),
  });
  if (!parsed.success) return err("VALIDATION_FAILED", "Invalid fact.", { issues: issuesOf(parsed.error) });
  const after = withFact(facts, parsed.data);
  const full = overBounds(after, parsed.data.key);
  return full ? err("MEMORY_FULL", full.message, full.details) : ok(after);
}

/** Why the memory could not hold `after` (with `key` just written), or null when it can. */
function overBounds(
  after: readonly MemoryFact[],
  key: string,
): { message: string; details: Record<string, unknown> } | null {
  const chars = memoryChars(after);
  const details = {
    key,
    facts: after.length,
    chars,
    limits: { facts: MEMORY_LIMITS.facts, total_chars: MEMORY_LIMITS.total_chars },
  };
  if (after.length > MEMORY_LIMITS.facts)
    return {
      message: `The session's memory holds ${MEMORY_LIMITS.facts} facts, the most it may: forget one first.`,
      details,
    };
  if (chars > MEMORY_LIMITS.total_chars)
    return {
      message: `The session's memory would hold ${chars} characters of keys and values; the most is ${MEMORY_LIMITS.total_chars}: forget or shorten a fact first.`,
      details,
    };
  return null;
}

/** The facts with `fact` in place of any of its key, sorted by key. */
function withFact(facts: readonly MemoryFact[], fact: MemoryFact): MemoryFact[] {
  return [...facts.filter((f) => f.key !== fact.key), fact].sort(byKey);
}

/** Keys are ASCII, so code-unit order is the storage's order (SQLite's BINARY collation). */
const byKey = (a: Pick<MemoryFact, "key">, b: Pick<MemoryFact, "key">) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/**
 * The section every agent's instructions get while the memory holds facts, else null. A
 * value's line breaks become spaces, so each fact stays one line of the list.
 */
export function factsPrompt(facts: readonly MemoryFact[]): string | null {
  if (facts.length === 0) return null;
  const lines = [...facts].sort(byKey).map((fact) => `- ${fact.key}: ${fact.value.replace(/\s*[\r\n]+\s*/g, " ")}`);
  return [
    "# Session memory",
    "These facts were recorded earlier in this conversation, by its agents or by people; take them as known.",
    ...lines,
  ].join("\n");
}
