import {
  type Artifact,
  type Message,
  type Part,
  Role,
  type StreamResponse,
  type Task,
  TaskState,
  type TaskStatus,
} from "@a2a-js/sdk";
import type { HistoryItem, TaskItem } from "../schemas/handoff";
import type { LiveDelta, LiveEvent } from "../schemas/live";
import type { Run, RunPending, RunStatus, TraceEvent } from "../schemas/run";

/**
 * Relay's runs as A2A 1.0 tasks (docs/a2a.md), pure: a task is a run, its context the run's
 * session; its state follows the run's status, its history is the conversation of its time
 * (with the handoffs it made), and its artifact the run's answer. Built as the official SDK's
 * objects, which its JSON-RPC handler serialises.
 */

/** The extension URI of Relay's handoff data part, declared in Relay's cards (docs/a2a.md, Handing off). */
export const HANDOFF_EXTENSION_URI = "urn:relay:a2a:extension:handoff:v1";

/** A run's status as an A2A task state: running is WORKING, every pause INPUT_REQUIRED. */
export const TASK_STATE_OF: Readonly<Record<RunStatus, TaskState>> = {
  running: TaskState.TASK_STATE_WORKING,
  awaiting_human: TaskState.TASK_STATE_INPUT_REQUIRED,
  awaiting_approval: TaskState.TASK_STATE_INPUT_REQUIRED,
  requires_action: TaskState.TASK_STATE_INPUT_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  cancelled: TaskState.TASK_STATE_CANCELED,
};

/** A run's status as the A2A task state's name (`TASK_STATE_WORKING`…), as traces carry it. */
export const taskStateName = (status: RunStatus): string => TaskState[TASK_STATE_OF[status]];

/** The A2A task states a run may be in, for ListTasks' status filter. */
export function runStatusesOf(state: TaskState): RunStatus[] {
  return (Object.keys(TASK_STATE_OF) as RunStatus[]).filter((status) => TASK_STATE_OF[status] === state);
}

export const isFinalState = (state: TaskState): boolean =>
  state === TaskState.TASK_STATE_COMPLETED ||
  state === TaskState.TASK_STATE_FAILED ||
  state === TaskState.TASK_STATE_CANCELED ||
  state === TaskState.TASK_STATE_REJECTED;

export const textPart = (text: string): Part => ({
  content: { $case: "text", value: text },
  metadata: undefined,
  filename: "",
  mediaType: "",
});

export const dataPart = (value: unknown): Part => ({
  content: { $case: "data", value },
  metadata: undefined,
  filename: "",
  mediaType: "application/json",
});

/** The text of a message's parts: text parts joined; data parts as JSON; file parts named. */
export function partsText(parts: readonly Part[]): string {
  return parts
    .map((part) => {
      const content = part.content;
      if (!content) return "";
      if (content.$case === "text") return content.value;
      if (content.$case === "data") return JSON.stringify(content.value);
      if (content.$case === "url") return `[file: ${part.filename || content.value}]`;
      return `[file: ${part.filename || part.mediaType || "attachment"}]`;
    })
    .filter((text) => text !== "")
    .join("\n");
}

export function agentMessage(
  run: Pick<Run, "id" | "session_id">,
  messageId: string,
  parts: Part[],
  metadata?: Record<string, unknown>,
): Message {
  return {
    messageId,
    contextId: run.session_id,
    taskId: run.id,
    role: Role.ROLE_AGENT,
    parts,
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

/**
 * The question a run waiting on a remote agent's input shows: the remote agent's own words, as
 * stored with the pause; for a run paused before they were kept, the last agent message of its
 * items, if they were read.
 */
function remoteQuestion(pending: Extract<RunPending, { kind: "input" }>, items: readonly TaskItem[]): string | null {
  if (pending.question) return pending.question;
  const asked = items.findLast((i) => i.role === "assistant" && (i.type ?? "message") === "message");
  return asked?.content ?? null;
}

/** What a paused or failed run says in its status message. */
function statusMessage(run: Run, items: readonly TaskItem[]): Message | undefined {
  const id = `status_${run.id}_${run.updated_at}`;
  const pending = run.pending;
  if (run.status === "failed" || run.status === "cancelled") {
    const error = run.error ?? { code: "INTERNAL", message: "The run failed." };
    return agentMessage(run, id, [textPart(`${error.code}: ${error.message}`)], {
      relay: { error: { code: error.code, message: error.message } },
    });
  }
  if (!pending) return undefined;
  const waiting =
    pending.kind === "input"
      ? (remoteQuestion(pending, items) ??
        `'${pending.agent}' needs your answer: send it as the next message of this task.`)
      : pending.kind === "human"
        ? `Waiting for a person to answer '${pending.agent}' in Relay's inbox (item ${pending.inbox_id}).`
        : pending.kind === "approval"
          ? `Waiting for a person to approve ${pending.approvals.length} tool call(s) in Relay's inbox.`
          : `Waiting for the client's outputs of ${pending.tool_calls.length} tool call(s) (POST /v1/sessions/${run.session_id}/tool-outputs).`;
  const metadata = pending.kind === "input" ? { relay: { agent: pending.agent } } : undefined;
  return agentMessage(run, id, [textPart(waiting), dataPart({ relay: { pending } })], metadata);
}

/** A run's task status; a run waiting on a remote agent says what it asked (from `items` when the run does not). */
export function taskStatus(run: Run, items: readonly TaskItem[] = []): TaskStatus {
  return { state: TASK_STATE_OF[run.status], message: statusMessage(run, items), timestamp: run.updated_at };
}

/** The id of the history item that holds the run's answer (its streamed pieces had it too). */
function answerId(run: Run, items: readonly HistoryItem[]): string {
  const found = [...items]
    .reverse()
    .find((i) => i.role === "assistant" && (i.type ?? "message") === "message" && i.content === run.output);
  return found?.id ?? `answer_${run.id}`;
}

/** A completed run's answer as the task's artifact. */
export function answerArtifact(artifactId: string, run: Pick<Run, "output" | "output_agent">): Artifact {
  return {
    artifactId,
    name: "answer",
    description: run.output_agent ? `The answer of '${run.output_agent}'.` : "",
    parts: [textPart(run.output ?? "")],
    metadata: run.output_agent ? { relay: { agent: run.output_agent } } : undefined,
    extensions: [],
  };
}

/** A handoff of the run as an agent message in the task's history. */
function handoffMessage(run: Pick<Run, "id" | "session_id">, event: TraceEvent): Message {
  const { from_agent: from, to_agent: to, handoff_reason: reason } = event.details;
  const text = `Handed off from '${from ?? event.agent_name}' to '${to ?? "?"}'${reason ? `: ${reason}` : ""}.`;
  return agentMessage(run, event.event_id, [textPart(text), dataPart({ relay: { handoff: { from, to, reason } } })]);
}

/**
 * A conversation item as a task's history message (tool calls and outputs are Relay's inner
 * workings: left out). A client's message keeps the `messageId` the client gave it.
 */
function historyMessage(run: Pick<Run, "id" | "session_id">, item: TaskItem): Message | null {
  if ((item.type ?? "message") !== "message" || (item.role !== "user" && item.role !== "assistant")) return null;
  return {
    messageId: item.client_message_id ?? item.id ?? `msg_${run.id}`,
    contextId: run.session_id,
    taskId: run.id,
    role: item.role === "user" ? Role.ROLE_USER : Role.ROLE_AGENT,
    parts: [textPart(item.content)],
    metadata: item.agent ? { relay: { agent: item.agent, ...(item.cut ? { cut: true } : {}) } } : undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The task of a run: its state, history (the last `historyLength` messages; 0: none) and answer. */
export function runTask(run: Run, items: readonly TaskItem[], historyLength?: number): Task {
  const messages = [
    ...items.flatMap((item) => {
      const message = historyMessage(run, item);
      return message ? [{ at: item.created_at ?? "", message }] : [];
    }),
    ...run.events
      .filter((e) => e.event_type === "handoff" && e.error === null)
      .map((e) => ({ at: e.timestamp, message: handoffMessage(run, e) })),
  ]
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))
    .map((m) => m.message);
  const history = historyLength === undefined ? messages : historyLength <= 0 ? [] : messages.slice(-historyLength);
  return {
    id: run.id,
    contextId: run.session_id,
    status: taskStatus(run, items),
    artifacts: run.status === "completed" ? [answerArtifact(answerId(run, items), run)] : [],
    history,
    metadata: {
      relay: {
        agent: run.agent,
        status: run.status,
        turns: run.turns,
        handoffs: run.handoffs,
        ...(run.output_agent ? { output_agent: run.output_agent } : {}),
      },
    },
  };
}

/**
 * Turns a run's live events into A2A stream responses (SendStreamingMessage,
 * SubscribeToTask): the task first, then status updates (WORKING, INPUT_REQUIRED, the end),
 * artifact updates for the answer's pieces as the model writes them (`message.delta`, appended)
 * and for the whole answer at the end, and a status update per handoff. `done` once the run
 * has stopped running (ended, or paused for input).
 */
export class RunStreamMapper {
  private assistant = new Map<string, string>();
  private started = false;
  done = false;

  constructor(
    private readonly taskId: string,
    private readonly contextId: string,
    /** Sent first when the stream joins a run already under way (SubscribeToTask). */
    initial?: Task,
  ) {
    if (initial) {
      this.started = true;
      this.first = initial;
    }
  }

  private first: Task | null = null;

  /** The task snapshot to send before anything else, once. */
  takeInitial(): StreamResponse[] {
    const task = this.first;
    this.first = null;
    return task ? [{ payload: { $case: "task", value: task } }] : [];
  }

  private status(run: Run, message?: Message): StreamResponse {
    const status = taskStatus(run);
    return {
      payload: {
        $case: "statusUpdate",
        value: {
          taskId: this.taskId,
          contextId: this.contextId,
          status: message ? { ...status, message } : status,
          metadata: undefined,
        },
      },
    };
  }

  private artifact(artifact: Artifact, append: boolean, lastChunk: boolean): StreamResponse {
    return {
      payload: {
        $case: "artifactUpdate",
        value: { taskId: this.taskId, contextId: this.contextId, artifact, append, lastChunk, metadata: undefined },
      },
    };
  }

  /** A piece of an answer being written: appended to the artifact of its message. */
  delta(delta: LiveDelta): StreamResponse[] {
    if (this.done) return [];
    const { message_id, agent, index, delta: text } = delta.data;
    const artifact: Artifact = {
      artifactId: message_id,
      name: "answer",
      description: "",
      parts: [textPart(text)],
      metadata: { relay: { agent } },
      extensions: [],
    };
    return [this.artifact(artifact, index > 0, false)];
  }

  /** One stored live event of the run. */
  event(event: LiveEvent): StreamResponse[] {
    if (this.done) return [];
    const run = { id: this.taskId, session_id: this.contextId };
    switch (event.type) {
      case "message": {
        const item = event.data as HistoryItem;
        if (item.role === "assistant" && (item.type ?? "message") === "message" && item.id)
          this.assistant.set(item.content, item.id);
        return [];
      }
      case "message.retracted": {
        const data = event.data as { message_id: string; agent: string; code: string };
        const retracted: Artifact = {
          artifactId: data.message_id,
          name: "answer",
          description: "",
          parts: [textPart("")],
          metadata: { relay: { retracted: true, code: data.code } },
          extensions: [],
        };
        return [this.artifact(retracted, false, true)];
      }
      case "handoff": {
        const trace = event.data as TraceEvent;
        if (trace.error !== null) return [];
        const message = handoffMessage(run, trace);
        const working: Run = {
          ...(this.lastRun ?? ({} as Run)),
          status: "running",
          pending: null,
          updated_at: event.at,
        };
        return this.lastRun ? [this.status(working, message)] : [];
      }
      case "run_started":
      case "run_resumed":
      case "run_paused":
      case "run_completed":
      case "run_failed":
      case "run_cancelled": {
        const data = event.data as Run;
        const stored: Run = { ...data, events: data.events ?? [] };
        this.lastRun = stored;
        const out: StreamResponse[] = [];
        if (!this.started) {
          this.started = true;
          out.push({ payload: { $case: "task", value: runTask(stored, []) } });
          if (event.type === "run_started") return out;
        }
        if (stored.status === "completed") {
          const id = this.assistant.get(stored.output ?? "") ?? `answer_${stored.id}`;
          out.push(this.artifact(answerArtifact(id, stored), false, true));
        }
        // A remote agent's question is the status message itself (taskStatus).
        out.push(this.status(stored));
        if (stored.status !== "running") this.done = true;
        return out;
      }
      default:
        return [];
    }
  }

  private lastRun: Run | null = null;
}
