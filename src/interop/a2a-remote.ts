import { type AgentCard, type Message, type Part, Role, type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import type { ChatMessage } from "../providers/types";
import type { HandoffContext } from "../schemas/handoff";
import { dataPart, HANDOFF_EXTENSION_URI, partsText, textPart } from "./a2a-task";

/**
 * A remote A2A agent's turn (docs/a2a.md, Remote agents), pure: the message Relay sends (what
 * is new since the agent's last answer, the handoff context on the first message after a
 * handoff) and what its answer means — the text, a handoff by Relay's data-part extension,
 * a request for input, or a failure — from a Message, a Task, or a stream of updates.
 */

/** The extension URI by which a card asks Relay to sign its requests (Standard Webhooks headers). */
export const SIGNED_REQUESTS_EXTENSION_URI = "urn:relay:a2a:extension:signed-requests:v1";

/** What Relay keeps of its thread with a remote agent in one session. */
export interface RemoteThread {
  context_id: string | null;
  /** The task an input-required answer left open: the next message continues it. */
  task_id: string | null;
  /** The handoff whose context the agent was last sent. */
  handoff_id: string | null;
}

/** The JSON-RPC interface of a card that speaks A2A 1.0, or why there is none. */
export function jsonRpcInterface(card: AgentCard): { ok: true; url: string } | { ok: false; message: string } {
  const found = (card.supportedInterfaces ?? []).find(
    (i) => i.protocolBinding?.toUpperCase() === "JSONRPC" && i.protocolVersion === "1.0",
  );
  return found?.url
    ? { ok: true, url: found.url }
    : { ok: false, message: "the card declares no JSON-RPC interface of A2A 1.0" };
}

/** True when the card asks for signed requests (Relay's signed-requests extension). */
export const cardAsksSigning = (card: AgentCard): boolean =>
  (card.capabilities?.extensions ?? []).some((e) => e.uri === SIGNED_REQUESTS_EXTENSION_URI);

/**
 * The text of what is new for the agent: the user's messages since the last answer; else the
 * errors its own last call got (a handoff Relay refused); else the last user message (a turn
 * after a handoff, whose only news is the handoff's own output).
 */
export function newInput(messages: readonly ChatMessage[]): string {
  let lastAnswer = -1;
  for (let i = messages.length - 1; i >= 0; i--)
    if (messages[i]!.role === "assistant") {
      lastAnswer = i;
      break;
    }
  const after = messages.slice(lastAnswer + 1);
  const users = after.filter((m) => m.role === "user");
  const errors = after.filter((m) => m.role === "tool" && m.content.startsWith("Error"));
  const chosen =
    users.length > 0 ? users : errors.length > 0 ? errors : messages.filter((m) => m.role === "user").slice(-1);
  return chosen
    .map((m) => m.content ?? "")
    .filter((text) => text !== "")
    .join("\n\n");
}

/** True when the card takes JSON input (it lists `application/json`, or no input modes at all). */
export const acceptsJson = (card: AgentCard): boolean =>
  (card.defaultInputModes ?? []).length === 0 || card.defaultInputModes.includes("application/json");

/**
 * The message of one turn: the new input, with the handoff context when the agent has not
 * had it — in the message's metadata (`relay.handoff`), and as a data part too when the card
 * takes JSON input.
 */
export function turnMessage(input: {
  message_id: string;
  text: string;
  thread: RemoteThread;
  context: HandoffContext | null;
  /** Relay's metadata: the tenant and target (signed with the message when the card asks), and where the turn comes from. */
  relay: { tenant: string; target: string; session_id: string; run_id: string; agent: string };
  accepts_json: boolean;
}): { message: Message; handoff_id: string | null } {
  const handoffId = input.context?.metadata.handoff_id ?? null;
  const parts: Part[] = [textPart(input.text)];
  const handoff = input.context && handoffId !== input.thread.handoff_id ? input.context : null;
  if (handoff && input.accepts_json) parts.push(dataPart({ relay: { handoff } }));
  return {
    message: {
      messageId: input.message_id,
      contextId: input.thread.context_id ?? "",
      taskId: input.thread.task_id ?? "",
      role: Role.ROLE_USER,
      parts,
      metadata: { relay: { ...input.relay, ...(handoff ? { handoff } : {}) } },
      extensions: [],
      referenceTaskIds: [],
    },
    handoff_id: handoffId ?? input.thread.handoff_id,
  };
}

/** A handoff the agent asked for with Relay's data part. */
export interface RemoteTransfer {
  target: string;
  reason: string;
}

/** The handoff in a data part `{ "relay": { "transfer_to": "<agent>", "reason": "…" } }`, if any. */
export function transferOf(parts: readonly Part[]): RemoteTransfer | null {
  for (const part of parts) {
    if (part.content?.$case !== "data") continue;
    const relay = (part.content.value as { relay?: { transfer_to?: unknown; reason?: unknown } } | null)?.relay;
    if (relay && typeof relay.transfer_to === "string" && relay.transfer_to !== "")
      return { target: relay.transfer_to, reason: typeof relay.reason === "string" ? relay.reason : "" };
  }
  return null;
}

/** What a remote agent's answer comes to. */
export type RemoteOutcome =
  | { kind: "answer"; text: string; transfer: RemoteTransfer | null; context_id: string | null }
  | { kind: "input"; text: string; task_id: string; context_id: string }
  | { kind: "working"; task_id: string; context_id: string }
  | { kind: "failed"; message: string };

/** The text of one message's or artifact's parts: pieces of one text, joined as they are. */
const textOnly = (parts: readonly Part[]) =>
  parts
    .filter((p) => p.content?.$case !== "data")
    .map((p) => partsText([p]))
    .join("");

/**
 * Collects an answer: a Message, a Task, or the stream responses of one, in order. Text
 * parts of artifact updates are handed to `onPiece` as they come (a replaced artifact's
 * are not), so the answer streams to Relay's clients as a model's does.
 */
export class RemoteAnswer {
  private artifacts = new Map<string, Part[]>();
  private task: { id: string; context_id: string; state: TaskState; status_parts: Part[] } | null = null;
  private message: Message | null = null;

  constructor(private readonly onPiece?: (text: string) => void) {}

  add(event: StreamResponse): void {
    const payload = event.payload;
    if (!payload) return;
    switch (payload.$case) {
      case "message":
        this.message = payload.value;
        return;
      case "task":
        this.setTask(payload.value);
        return;
      case "statusUpdate": {
        const { status, taskId, contextId } = payload.value;
        this.task = {
          id: taskId,
          context_id: contextId,
          state: status?.state ?? TaskState.TASK_STATE_WORKING,
          status_parts: status?.message?.parts ?? [],
        };
        return;
      }
      case "artifactUpdate": {
        const { artifact, append } = payload.value;
        if (!artifact) return;
        const seen = this.artifacts.get(artifact.artifactId);
        if (seen && append) seen.push(...artifact.parts);
        else this.artifacts.set(artifact.artifactId, [...artifact.parts]);
        if (!seen || append) {
          const text = textOnly(artifact.parts);
          if (text !== "") this.onPiece?.(text);
        }
        return;
      }
    }
  }

  /** A whole reply (SendMessage's result). */
  addReply(reply: Message | Task): void {
    if ("messageId" in reply) this.message = reply;
    else this.setTask(reply);
  }

  private setTask(task: Task): void {
    for (const artifact of task.artifacts ?? []) this.artifacts.set(artifact.artifactId, [...artifact.parts]);
    this.task = {
      id: task.id,
      context_id: task.contextId,
      state: task.status?.state ?? TaskState.TASK_STATE_WORKING,
      status_parts: task.status?.message?.parts ?? [],
    };
  }

  /** The task the answer is about, while it is still working (to poll). */
  get openTask(): { id: string; context_id: string } | null {
    return this.task && this.outcome().kind === "working"
      ? { id: this.task.id, context_id: this.task.context_id }
      : null;
  }

  outcome(): RemoteOutcome {
    if (this.message) {
      const parts = this.message.parts;
      return {
        kind: "answer",
        text: textOnly(parts),
        transfer: transferOf(parts),
        context_id: this.message.contextId || null,
      };
    }
    if (!this.task) return { kind: "failed", message: "the agent answered neither a message nor a task" };
    const artifactParts = [...this.artifacts.values()].flat();
    const artifactText = [...this.artifacts.values()]
      .map(textOnly)
      .filter((t) => t !== "")
      .join("\n\n");
    const all = [...artifactParts, ...this.task.status_parts];
    const statusText = textOnly(this.task.status_parts);
    const { id, context_id, state } = this.task;
    switch (state) {
      case TaskState.TASK_STATE_COMPLETED: {
        const text = artifactText || statusText;
        return { kind: "answer", text, transfer: transferOf(all), context_id };
      }
      case TaskState.TASK_STATE_INPUT_REQUIRED:
        return {
          kind: "input",
          text: statusText || artifactText || "The agent needs more input.",
          task_id: id,
          context_id,
        };
      case TaskState.TASK_STATE_FAILED:
      case TaskState.TASK_STATE_REJECTED:
      case TaskState.TASK_STATE_CANCELED:
        return {
          kind: "failed",
          message: `the agent's task ended ${TaskState[state].replace("TASK_STATE_", "").toLowerCase()}${statusText ? `: ${statusText}` : ""}`,
        };
      case TaskState.TASK_STATE_AUTH_REQUIRED:
        return { kind: "failed", message: "the agent asks for authentication Relay cannot give" };
      default:
        return { kind: "working", task_id: id, context_id };
    }
  }
}

/** Whether the extension URI of Relay's handoff part is declared by a card (informational: Relay reads the part either way). */
export const cardDeclaresHandoff = (card: AgentCard): boolean =>
  (card.capabilities?.extensions ?? []).some((e) => e.uri === HANDOFF_EXTENSION_URI);
