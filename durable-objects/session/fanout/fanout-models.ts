import { deadline } from "../../../src/lib/deadline";
import { raceAbort } from "../../../src/providers/failures";
import type { ChatMessage } from "../../../src/providers/types";
import { systemPrompt } from "../../../src/runtime/messages";
import { callModel, turnTimeoutMs } from "../../../src/runtime/turn";
import type { AgentDefinition } from "../../../src/schemas/agent";
import { type Fanout, TaskDecomposition } from "../../../src/schemas/collaboration";
import type { AgentModels } from "../../../src/services/agent-models";
import type { TraceContext } from "../../../src/telemetry/trace-context";

/**
 * The supervisor's own model in a fan-out: it plans the tasks with one `plan_tasks` call and
 * writes the one answer from the results. Both are optional: offline (the `local` provider),
 * for a non-model supervisor, or when a call fails, Relay's rule-based decomposition and its
 * own aggregate stand in (src/collaboration).
 */

/**
 * The supervisor's own decomposition: a model call that must answer with one `plan_tasks`
 * call naming the agents it hands parts to. Null offline, or when the call fails or its
 * plan does not fit (Relay's rule-based decomposition is used then).
 */
export async function planWithModel(
  supervisor: AgentDefinition,
  candidates: AgentDefinition[],
  input: string,
  models: AgentModels,
): Promise<TaskDecomposition | null> {
  if (
    !models.provider.ok ||
    models.provider.value.name === "local" ||
    supervisor.kind !== "llm" ||
    candidates.length === 0
  )
    return null;
  const roster = candidates.map((a) => `- ${a.name}: ${a.description || a.title || a.name}`).join("\n");
  const messages: ChatMessage[] = [
    {
      role: "system",
      content: `${systemPrompt(supervisor, null)}\n\nSplit the request into tasks for these agents (one task per agent at most) and call plan_tasks:\n${roster}`,
    },
    { role: "user", content: input },
  ];
  const tool = {
    type: "function" as const,
    function: {
      name: "plan_tasks",
      description: "Hand parts of the request to agents, to run in parallel.",
      parameters: {
        type: "object",
        properties: {
          tasks: {
            type: "array",
            minItems: 1,
            items: {
              type: "object",
              properties: {
                agent: { type: "string", enum: candidates.map((a) => a.name) },
                instruction: { type: "string" },
              },
              required: ["agent", "instruction"],
            },
          },
        },
        required: ["tasks"],
      },
    },
  };
  const { signal, clear } = deadline(turnTimeoutMs(supervisor));
  try {
    const response = await raceAbort(
      models.provider.value.complete(
        { model: supervisor.model ?? models.default_model, messages, tools: [tool], tool_choice: "required" },
        signal,
      ),
      signal,
      models.provider.value.name,
    );
    const call = response.tool_calls.find((c) => c.name === "plan_tasks");
    if (!call) return null;
    const plan = JSON.parse(call.arguments) as { tasks?: { agent?: unknown; instruction?: unknown }[] };
    const parsed = TaskDecomposition.safeParse({
      original_query: input,
      tasks: (plan.tasks ?? []).map((t, i) => ({
        task_id: `task_${i + 1}`,
        agent: t.agent,
        instruction: t.instruction,
      })),
    });
    return parsed.success && parsed.data.tasks.every((t) => candidates.some((a) => a.name === t.agent))
      ? parsed.data
      : null;
  } catch {
    return null;
  } finally {
    clear();
  }
}

/**
 * The supervisor's own aggregate (a model call); null offline or on failure (Relay's is used).
 * `trace`: the run's, for a fan-out a run's turn asked for (docs/observability.md, Propagation).
 */
export async function aggregateWithModel(
  supervisor: AgentDefinition,
  fanout: Fanout,
  models: AgentModels,
  trace?: TraceContext,
): Promise<string | null> {
  if (!models.provider.ok || models.provider.value.name === "local" || supervisor.kind !== "llm") return null;
  const results = fanout.results
    .map(
      (r) =>
        `- ${r.agent} (${r.task_id}): ${r.success ? (typeof r.data === "string" ? r.data : JSON.stringify(r.data)) : `failed: ${r.error}`}`,
    )
    .join("\n");
  const messages: ChatMessage[] = [
    { role: "system", content: systemPrompt(supervisor, null) },
    {
      role: "user",
      content: `${fanout.decomposition.original_query}\n\nYour agents answered:\n${results}\n\nWrite the one answer to the request from these.`,
    },
  ];
  const answer = await callModel(
    models.provider.value,
    {
      session_id: fanout.session_id,
      run_id: fanout.id,
      agent: supervisor.name,
      model: supervisor.model ?? models.default_model,
      messages,
      tools: [],
      context: null,
    },
    turnTimeoutMs(supervisor),
    trace ? { trace } : {},
  );
  return answer.ok && answer.response.content ? answer.response.content : null;
}
