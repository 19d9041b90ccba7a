import { Validator } from "@cfworker/json-schema";
import type { ChatResponse, ToolCall } from "../providers/types";
import type { HistoryItem } from "../schemas/handoff";
import type { WorkCallKind } from "../schemas/run";
import type { AgentTools, ToolBinding } from "./agent-tools";

/**
 * What one agent response means (docs/runs.md, Handoff tools): the pure half of a turn. The model's message
 * goes into the history with every tool call it made; each call the run will not carry out
 * gets its error output at once (the model sees it and can correct itself); the registry
 * tools it may call with valid arguments are run; and at most one handoff — the first —
 * is carried out by the run, after them.
 */

export type TurnAction =
  /** No tool call: the text is the agent's answer, and the run ends. */
  | { type: "final"; output: string }
  /** A transfer or return: the run asks the handoff engine, then answers `call` with the outcome. */
  | {
      type: "handoff";
      call: ToolCall;
      binding: Extract<ToolBinding, { kind: "transfer" | "return" }>;
      reason: string;
      input: unknown;
    }
  /** escalate_to_human: the run waits for a person, whose reply answers `call`. */
  | { type: "escalate"; call: ToolCall; reason: string }
  /** No handoff: the agent takes another turn once its tool calls are answered. */
  | { type: "continue" };

/**
 * A call Relay or the client runs (a registry tool, or an agent-to-agent tool) with arguments that fit
 * its parameters.
 */
export interface FunctionCall {
  call: ToolCall;
  kind: WorkCallKind;
}

export interface TurnDecision {
  /** The model's message as a history item (text and every tool call). */
  assistant: HistoryItem;
  /** Tool outputs known now, in call order: the errors of calls that are not run. */
  outputs: HistoryItem[];
  action: TurnAction;
  /** Handoff calls after the first: answered with an error, and kept out of the target's view. */
  ignored_call_ids: string[];
  /** Registry tool calls to run, in call order. */
  calls: FunctionCall[];
  /** Calls to the memory's own tools with valid arguments, answered by the session before the step is written. */
  memory_calls: ToolCall[];
}

/** A tool call's output item. */
export function toolOutput(agent: string, call: ToolCall, content: string): HistoryItem {
  return { role: "tool", agent, type: "tool_output", tool_name: call.name, tool_call_id: call.id, content };
}

function parseArguments(text: string): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  let value: unknown;
  try {
    value = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    return { ok: false, message: "the arguments are not valid JSON" };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return { ok: false, message: "the arguments must be a JSON object" };
  return { ok: true, value: value as Record<string, unknown> };
}

/** Why a call's input does not fit its JSON Schema, one line per error; empty when it fits. */
export function schemaErrors(schema: Record<string, unknown>, value: unknown): string[] {
  const result = new Validator(schema as never, "2020-12", false).validate(value);
  return result.valid ? [] : result.errors.map((e) => `${e.instanceLocation}: ${e.error}`);
}

/** The error a call to a tool the agent was not offered gets; it names what the agent may call. */
function unknownCall(call: ToolCall, tools: AgentTools): string {
  const offered = tools.tools.map((t) => t.function.name).join(", ");
  if (call.name.startsWith("transfer_to_") || call.name.startsWith("return_to_")) {
    const allowed = tools.allowed_targets.length > 0 ? tools.allowed_targets.join(", ") : "none";
    return `Error: '${call.name}' is not a handoff you can make now. Your allowed targets are: ${allowed}. Tools you can call: ${offered}.`;
  }
  const allowed = tools.allowed_tools.length > 0 ? tools.allowed_tools.join(", ") : "none";
  return `Error: '${call.name}' is not a tool you may use; it was not run. Your allowed tools are: ${allowed}. Tools you can call: ${offered}.`;
}

/** A call's arguments: a JSON object that fits the tool's parameters. */
function checkFunctionCall(call: ToolCall, parameters: Record<string, unknown>): string | null {
  const args = parseArguments(call.arguments);
  if (!args.ok) return `Error: ${args.message}; call '${call.name}' again with a JSON object.`;
  const errors = schemaErrors(parameters, args.value);
  return errors.length > 0
    ? `Error: the arguments do not match the parameters of '${call.name}':\n${errors.join("\n")}\nCall it again with valid arguments.`
    : null;
}

/** Checks the chosen handoff call's arguments: a reason, and input of the entry's schema. */
function checkHandoffCall(
  call: ToolCall,
  binding: ToolBinding,
): { ok: true; reason: string; input: unknown } | { ok: false; message: string } {
  const args = parseArguments(call.arguments);
  if (!args.ok) return { ok: false, message: `Error: ${args.message}; call '${call.name}' again with a JSON object.` };
  const reason = args.value.reason;
  if (typeof reason !== "string" || reason.trim() === "")
    return { ok: false, message: `Error: '${call.name}' needs a non-empty 'reason' string.` };
  if (binding.kind === "transfer" && binding.entry.input_schema) {
    const errors = schemaErrors(binding.entry.input_schema, args.value.input);
    if (errors.length > 0)
      return {
        ok: false,
        message: `Error: the input does not match the schema '${call.name}' takes:\n${errors.join("\n")}\nCall it again with valid input.`,
      };
  }
  return { ok: true, reason: reason.trim(), input: args.value.input };
}

export function interpretTurn(agent: string, response: ChatResponse, tools: AgentTools): TurnDecision {
  const calls = response.tool_calls;
  const assistant: HistoryItem =
    calls.length === 0
      ? { role: "assistant", agent, type: "message", content: response.content ?? "" }
      : {
          role: "assistant",
          agent,
          type: "tool_call",
          content: response.content ?? "",
          tool_calls: calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })),
        };
  if (calls.length === 0)
    return {
      assistant,
      outputs: [],
      action: { type: "final", output: response.content ?? "" },
      ignored_call_ids: [],
      calls: [],
      memory_calls: [],
    };

  const outputs: HistoryItem[] = [];
  const functions: FunctionCall[] = [];
  const memory: ToolCall[] = [];
  const ignored: string[] = [];
  let action: TurnAction = { type: "continue" };
  let first: ToolCall | null = null;
  for (const call of calls) {
    const binding = tools.bindings.get(call.name);
    if (!binding) {
      outputs.push(toolOutput(agent, call, unknownCall(call, tools)));
      continue;
    }
    if (binding.kind === "memory") {
      const refused = checkFunctionCall(call, binding.parameters);
      if (refused === null) memory.push(call);
      else outputs.push(toolOutput(agent, call, refused));
      continue;
    }
    if (binding.kind === "function" || binding.kind === "peer") {
      const refused = checkFunctionCall(
        call,
        binding.kind === "function" ? binding.tool.parameters : binding.parameters,
      );
      if (refused === null)
        functions.push({ call, kind: binding.kind === "function" ? binding.tool.kind : binding.action });
      else outputs.push(toolOutput(agent, call, refused));
      continue;
    }
    if (first !== null) {
      ignored.push(call.id);
      outputs.push(
        toolOutput(
          agent,
          call,
          `Error: not run. Only one handoff per turn is carried out, and '${first.name}' was called first.`,
        ),
      );
      continue;
    }
    first = call;
    const checked = checkHandoffCall(call, binding);
    if (!checked.ok) {
      outputs.push(toolOutput(agent, call, checked.message));
      continue;
    }
    action =
      binding.kind === "escalate"
        ? { type: "escalate", call, reason: checked.reason }
        : { type: "handoff", call, binding, reason: checked.reason, input: checked.input };
  }
  return { assistant, outputs, action, ignored_call_ids: ignored, calls: functions, memory_calls: memory };
}

/** The output the run gives a handoff call once the engine has answered. */
export function handoffOutput(
  agent: string,
  call: ToolCall,
  outcome: { ok: true; target: string } | { ok: false; code: string; message: string; allowed?: string[] },
): HistoryItem {
  if (outcome.ok) return toolOutput(agent, call, JSON.stringify({ assistant: outcome.target }));
  const allowed =
    outcome.allowed && outcome.allowed.length > 0 ? ` Your allowed targets are: ${outcome.allowed.join(", ")}.` : "";
  return toolOutput(agent, call, `Error: the handoff was refused (${outcome.code}): ${outcome.message}${allowed}`);
}

/** The output of an escalate_to_human call: what the person answered, or that nobody did. */
export function escalationOutput(
  agent: string,
  call: ToolCall,
  reply: { answered: true; text: string } | { answered: false; reason: string },
): HistoryItem {
  return toolOutput(
    agent,
    call,
    reply.answered
      ? `A person answered: ${reply.text}`
      : `Error: no person answered (${reply.reason}). Carry on without them, or tell the user.`,
  );
}
