import type {
  AgentCard,
  CancelTaskRequest,
  GetTaskRequest,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
} from "@a2a-js/sdk";
import { TaskState } from "@a2a-js/sdk";
import {
  A2AError,
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "@a2a-js/sdk/errors";
import type { A2ARequestHandler, ServerCallContext } from "@a2a-js/sdk/server";
import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import type { Actor } from "../audit/record";
import { backgroundOf } from "../auth/middleware";
import type { ErrorBody, Result } from "../errors";
import { isFinalState, partsText, RunStreamMapper, runStatusesOf, runTask, TASK_STATE_OF } from "../interop/a2a-task";
import { readSse } from "../lib/sse";
import type { SessionRpc } from "../rpc/session";
import { sessionRpc } from "../rpc/stubs";
import type { Admission } from "../rpc/tenant";
import { readLiveFrame } from "../runtime/live-events";
import { sessionOfRun } from "../runtime/run-record";
import type { AgentDefinition } from "../schemas/agent";
import type { Run } from "../schemas/run";
import { DEFAULT_TTL_S } from "../schemas/session";
import { admit, release } from "../services/admissions";
import { routeInput } from "../services/routing";
import { isSessionId, newSessionId } from "../sessions/ids";
import { incomingTrace } from "../telemetry/propagation";
import { listA2aTasks } from "./a2a-list";
import { recordRouted } from "./route-history";
import { RUN_CALL_DEADLINE_MS } from "./session-result";

/**
 * Relay's A2A request handler (docs/a2a.md): the official SDK's JSON-RPC transport handler
 * parses and answers the protocol; this class carries each method to Relay's sessions. A
 * message without a context starts a session (with the agent of the endpoint, or the
 * router's pick at the front door); the task is the run the message starts; a message to an
 * input-required task continues its run.
 */

/** Who a message is for: one agent (`/a2a/<agent>`), or the router (`/a2a`). */
export type A2aTarget = { kind: "agent"; agent: AgentDefinition } | { kind: "front" };

/** How long a blocking SendMessage waits for its run to end or pause, past the session's own wait. */
const BLOCKING_WAIT_MS = 120_000;
const POLL_MS = 500;

export const A2A_ACTOR: Actor = { actor: "a2a", actor_type: "user" };

/**
 * The JSON-RPC code of a quota refusal (docs/a2a.md, Errors): A2A 1.0 gives back-pressure no
 * code, and its own codes say the operation is not supported here, which a client would not
 * retry; so one from JSON-RPC's implementation-defined server errors, 429 in it.
 */
export const A2A_QUOTA_EXCEEDED = -32029;

/** A quota refusal as a JSON-RPC error: code A2A_QUOTA_EXCEEDED, its details as google.rpc ErrorInfo and RetryInfo. */
export class QuotaExceededError extends A2AError {
  readonly transport = "jsonrpc";
  readonly envelopeCode = A2A_QUOTA_EXCEEDED;
  constructor(readonly body: ErrorBody) {
    super({ message: body.message, metadata: { relay_code: body.code } });
    this.name = "QuotaExceededError";
  }

  /** The JSON-RPC `error.data`: what the limit is and when to come back. */
  data(): Record<string, unknown>[] {
    const details = (this.body.details ?? {}) as Record<string, unknown>;
    const metadata = Object.fromEntries(
      Object.entries({ relay_code: this.body.code, ...details })
        .filter(([, v]) => v !== null && v !== undefined)
        .map(([k, v]) => [k, String(v)]),
    );
    const retry = details.retry_after_s;
    return [
      { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "QUOTA_EXCEEDED", domain: "relay", metadata },
      ...(typeof retry === "number"
        ? [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: `${retry}s` }]
        : []),
    ];
  }
}

/** A Relay error as the A2A error a client can act on. */
export function a2aError(error: ErrorBody, task?: boolean): Error {
  const metadata = { relay_code: error.code };
  switch (error.code) {
    case "QUOTA_EXCEEDED":
      return new QuotaExceededError(error);
    case "SESSION_NOT_FOUND":
    case "SESSION_EXPIRED":
    case "RUN_NOT_FOUND":
      return task
        ? new TaskNotFoundError({ message: error.message, metadata })
        : new RequestMalformedError({
            message: `${error.message} Leave contextId out to start a new context.`,
            metadata,
          });
    case "RUN_NOT_CANCELLABLE":
      return new TaskNotCancelableError({ message: error.message, metadata });
    case "RUN_IN_PROGRESS":
    case "NO_ROUTE":
    case "ROUTING_DISABLED":
    case "AGENT_UNAVAILABLE":
    case "AGENT_NOT_FOUND":
      return new UnsupportedOperationError({ message: error.message, metadata });
    case "VALIDATION_FAILED":
      return new RequestMalformedError({ message: error.message, metadata });
    default:
      return new A2AError({ message: `${error.code}: ${error.message}`, metadata });
  }
}

/** The session a task id names, or TaskNotFound. */
function sessionOfTask(taskId: string): string {
  const id = sessionOfRun(taskId);
  if (!id) throw new TaskNotFoundError({ message: `No task '${taskId}'.` });
  return id;
}

export class RelayA2aHandler implements A2ARequestHandler {
  /** Live event ids of the stream responses yielded, in order (null: not a stored event): the SSE frames' `id:`. */
  readonly eventIds: (string | null)[] = [];
  /** The quota refusal this request met, if any: the transport writes its code, the endpoint its data. */
  refusal: QuotaExceededError | null = null;

  constructor(
    private readonly c: Context<AppEnv>,
    private readonly target: A2aTarget,
    private readonly card: AgentCard,
  ) {}

  private get tenant(): string {
    return this.c.get("tenant");
  }

  private unwrap<T>(result: Result<T>, task?: boolean): T {
    if (result.ok) return result.value;
    const error = a2aError(result.error, task);
    if (error instanceof QuotaExceededError) this.refusal = error;
    throw error;
  }

  private rpc(sessionId: string, deadlineMs?: number): SessionRpc {
    return sessionRpc(this.c.env, this.tenant, sessionId, deadlineMs);
  }

  async getAgentCard(): Promise<AgentCard> {
    return this.card;
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    return this.card;
  }

  /** The text Relay runs: the message's parts; an empty message is refused. */
  private text(message: Message | undefined): string {
    const text = message ? partsText(message.parts) : "";
    if (text.trim() === "") throw new RequestMalformedError({ message: "The message has no text or data part." });
    return text;
  }

  /**
   * The session a message goes to: its task's (a message continuing an input-required task),
   * its context's, or a new one — with the endpoint's agent, or the router's pick.
   */
  private async sessionFor(message: Message, text: string): Promise<{ id: string; admission: Admission | null }> {
    if (message.taskId) {
      const id = sessionOfTask(message.taskId);
      if (message.contextId && message.contextId !== id)
        throw new RequestMalformedError({ message: "contextId is not the context of taskId." });
      const { run } = this.unwrap(await this.rpc(id).runTask(message.taskId), true);
      const state = TASK_STATE_OF[run.status];
      if (isFinalState(state))
        throw new UnsupportedOperationError({
          message: `Task '${run.id}' has ended (${run.status}); send the message without taskId to start a new task in its context.`,
        });
      if (run.status !== "awaiting_human" || run.pending?.kind !== "input")
        throw new UnsupportedOperationError({
          message:
            run.status === "running"
              ? `Task '${run.id}' is working; wait for it, or cancel it.`
              : `Task '${run.id}' waits for ${run.pending?.kind === "approval" ? "an approval" : run.pending?.kind === "client_tools" ? "the client's tool outputs" : "a person"} in Relay, not for a message.`,
        });
      return { id, admission: null };
    }
    if (message.contextId) {
      if (!isSessionId(message.contextId))
        throw new RequestMalformedError({
          message: `No context '${message.contextId}': leave contextId out to start a new one.`,
        });
      return { id: message.contextId, admission: null };
    }
    return this.newSession(text);
  }

  /**
   * A new conversation: its session and first run admitted together against the tenant's quotas
   * before anything is routed or made (a session with no run would be half of what was asked),
   * then the session. Its run then starts without asking again.
   */
  private async newSession(text: string): Promise<{ id: string; admission: Admission }> {
    const background = backgroundOf(this.c);
    const admission = this.unwrap(await admit(this.c.env, this.tenant, { sessions: true, runs: true }, background));
    try {
      return { id: await this.makeSession(text), admission };
    } catch (error) {
      background(release(this.c.env, this.tenant, admission));
      throw error;
    }
  }

  private async makeSession(text: string): Promise<string> {
    const id = newSessionId();
    let agent: string;
    let capacity: number | null;
    let route: Awaited<ReturnType<typeof routeInput>>["decision"] | undefined;
    if (this.target.kind === "agent") {
      agent = this.target.agent.name;
      capacity = this.target.agent.max_concurrent_sessions ?? null;
    } else {
      const routed = await routeInput(this.c.env, this.tenant, text).catch((error: unknown) => {
        const body = (error as { code?: string; message?: string }).code
          ? (error as ErrorBody)
          : { code: "INTERNAL", message: String(error) };
        throw a2aError(body as ErrorBody);
      });
      route = routed.decision;
      if (!route.agent)
        throw new UnsupportedOperationError({
          message: "No agent of this tenant takes this request (NO_ROUTE).",
          metadata: { relay_code: "NO_ROUTE" },
        });
      agent = route.agent;
      capacity = routed.registry.byName.get(agent)?.max_concurrent_sessions ?? null;
    }
    this.unwrap(
      await this.rpc(id).create(
        this.tenant,
        id,
        { agent, capacity, metadata: { channel: "a2a" }, ttl_s: DEFAULT_TTL_S, ...(route ? { route } : {}) },
        A2A_ACTOR,
      ),
    );
    if (route)
      recordRouted(this.c.env, this.tenant, backgroundOf(this.c), { session_id: id, input: text, decision: route });
    return id;
  }

  /** The run as a task, with at most `historyLength` messages. */
  private async task(sessionId: string, runId: string, historyLength?: number): Promise<Task> {
    const { run, items } = this.unwrap(await this.rpc(sessionId).runTask(runId), true);
    return runTask(run, items, historyLength);
  }

  /** Waits (polling) until the run has stopped running, at most BLOCKING_WAIT_MS. */
  private async settled(sessionId: string, run: Run): Promise<void> {
    const until = Date.now() + BLOCKING_WAIT_MS;
    let current = run;
    while (current.status === "running" && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      current = this.unwrap(await this.rpc(sessionId).getRun(run.id), true);
    }
  }

  async sendMessage(params: SendMessageRequest, _context: ServerCallContext): Promise<Message | Task> {
    const text = this.text(params.message);
    const { id: sessionId, admission } = await this.sessionFor(params.message!, text);
    const background = params.configuration?.returnImmediately === true;
    // A new conversation's run was admitted with its session: on a fresh session nothing but the
    // platform refuses it, and then it may have started, so the admission stands.
    const started = this.unwrap(
      await this.rpc(sessionId, RUN_CALL_DEADLINE_MS).sendMessage(
        text,
        A2A_ACTOR,
        {},
        {
          background,
          admitted: admission !== null,
          client_message_id: params.message!.messageId,
          a2a_method: "SendMessage",
          ...incomingTrace(this.c.req.raw.headers),
        },
      ),
      !!params.message?.taskId,
    );
    if (!background) await this.settled(sessionId, started.run);
    return this.task(sessionId, started.run.id, params.configuration?.historyLength);
  }

  async *sendMessageStream(params: SendMessageRequest, _context: ServerCallContext): AsyncGenerator<StreamResponse> {
    const text = this.text(params.message);
    const { id: sessionId, admission } = await this.sessionFor(params.message!, text);
    const { stream } = this.unwrap(
      await this.rpc(sessionId).streamMessage(
        text,
        A2A_ACTOR,
        {},
        {
          detached: true,
          admitted: admission !== null,
          client_message_id: params.message!.messageId,
          a2a_method: "SendStreamingMessage",
          ...incomingTrace(this.c.req.raw.headers),
        },
      ),
      !!params.message?.taskId,
    );
    const taskId = params.message?.taskId;
    yield* this.relay(stream, new RunStreamMapper(taskId ?? "", sessionId), taskId);
  }

  async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse> {
    const sessionId = sessionOfTask(params.id);
    const after = this.lastEventId(context);
    const { run, stream } = this.unwrap(await this.rpc(sessionId).subscribeRun(params.id, after), true);
    if (!stream || isFinalState(TASK_STATE_OF[run.status]))
      throw new UnsupportedOperationError({ message: `Task '${run.id}' has ended (${run.status}).` });
    const task = await this.task(sessionId, params.id);
    yield* this.relay(stream, new RunStreamMapper(params.id, sessionId, task), params.id);
  }

  /** `Last-Event-ID` of a reconnecting subscriber: a stream resumes after it. */
  private lastEventId(context: ServerCallContext): string | undefined {
    const id = this.c.req.header("Last-Event-ID") ?? (context.state.get("last-event-id") as string | undefined);
    return id && /^evt_[0-9a-z]{26}$/.test(id) ? id : undefined;
  }

  /** A run's Relay SSE stream as A2A stream responses, each with the live event id it came from. */
  private async *relay(
    stream: ReadableStream<Uint8Array>,
    initial: RunStreamMapper,
    taskId: string | undefined,
  ): AsyncGenerator<StreamResponse> {
    let mapper = initial;
    const out = (responses: StreamResponse[], id: string | null) => {
      for (const _ of responses) this.eventIds.push(id);
      return responses;
    };
    yield* out(mapper.takeInitial(), null);
    let ended = false;
    try {
      for await (const frame of readSse(stream)) {
        // The run's stream ends by itself after `result`; events past the task's end are not sent.
        if (frame.event === "result") {
          ended = true;
          break;
        }
        if (mapper.done) continue;
        const data = readLiveFrame(frame);
        // One this version cannot read (a newer type, say) is skipped, as a forward-compatible reader does.
        if (data === null) continue;
        if (!taskId && data.run_id) {
          // The run's id is known from its first event: the task the stream speaks of.
          taskId = data.run_id;
          mapper = new RunStreamMapper(taskId, data.session_id);
        }
        const responses = data.type === "message.delta" ? mapper.delta(data) : mapper.event(data);
        yield* out(responses, frame.id ?? null);
      }
    } finally {
      // The client went away first: stop reading (the run goes on, detached from its stream).
      if (!ended) await stream.cancel().catch(() => undefined);
    }
  }

  async getTask(params: GetTaskRequest): Promise<Task> {
    return this.task(sessionOfTask(params.id), params.id, params.historyLength);
  }

  async cancelTask(params: CancelTaskRequest): Promise<Task> {
    const sessionId = sessionOfTask(params.id);
    this.unwrap(await this.rpc(sessionId).cancelRun(params.id, A2A_ACTOR), true);
    return this.task(sessionId, params.id);
  }

  async listTasks(params: ListTasksRequest): Promise<ListTasksResponse> {
    // UNRECOGNIZED is what the SDK's client sends for a status left unset: no filter.
    const filtered = params.status && params.status !== TaskState.UNRECOGNIZED;
    const statuses = filtered ? runStatusesOf(params.status) : null;
    return listA2aTasks(this.c, this.target.kind === "agent" ? this.target.agent.name : null, params, statuses);
  }

  async createTaskPushNotificationConfig(): Promise<never> {
    throw new PushNotificationNotSupportedError();
  }
  async getTaskPushNotificationConfig(): Promise<never> {
    throw new PushNotificationNotSupportedError();
  }
  async listTaskPushNotificationConfigs(): Promise<never> {
    throw new PushNotificationNotSupportedError();
  }
  async deleteTaskPushNotificationConfig(): Promise<never> {
    throw new PushNotificationNotSupportedError();
  }
}
