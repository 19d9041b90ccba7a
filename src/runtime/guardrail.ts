import type { ChatMessage } from "../providers/types";
import type { AgentDefinition } from "../schemas/agent";
import { schemaErrors } from "./interpret";

/**
 * Output guardrails (docs/runs.md, Output guardrails): an agent with `guardrails.output_schema` must give a final
 * answer that is JSON fitting that schema. Validated with @cfworker/json-schema, which
 * interprets schemas (no eval or new Function, which Workers forbid). What a failure does
 * is the agent's `on_failure`: reject fails the run, repair asks the model once more with
 * the errors, warn returns the answer with a warning.
 */

export type OutputCheck = { ok: true } | { ok: false; errors: string[] };

/** Whether `output` passes the agent's output schema (always, when it has none). */
export function checkOutput(agent: Pick<AgentDefinition, "guardrails">, output: string): OutputCheck {
  const schema = agent.guardrails?.output_schema;
  if (!schema) return { ok: true };
  let value: unknown;
  try {
    value = JSON.parse(output);
  } catch {
    return { ok: false, errors: ["the output is not JSON"] };
  }
  const errors = schemaErrors(schema, value);
  return errors.length === 0 ? { ok: true } : { ok: false, errors };
}

/** The line the system prompt carries when the agent has an output schema, so the model knows before it answers. */
export function outputSchemaInstruction(agent: Pick<AgentDefinition, "guardrails">): string | null {
  const schema = agent.guardrails?.output_schema;
  return schema
    ? `Your final answer must be only JSON that matches this JSON Schema:\n${JSON.stringify(schema)}`
    : null;
}

/** The repair request: the failed answer, then what was wrong with it. */
export function repairMessages(output: string, errors: readonly string[]): ChatMessage[] {
  return [
    { role: "assistant", content: output },
    {
      role: "user",
      content: `Your answer does not match the required output schema:\n${errors.map((e) => `- ${e}`).join("\n")}\nAnswer again with only JSON that matches the schema.`,
    },
  ];
}
