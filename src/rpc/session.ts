import type { Actor } from "../audit/record";
import type { Result } from "../errors";
import type { AddedMessage, LocalAuditRecord, MessageRun } from "../schemas/api";
import type { Fanout, FanoutStart } from "../schemas/collaboration";
import type { Handoff, HandoffRequest, TaskItem } from "../schemas/handoff";
import type { InboxAnswer, InboxItem } from "../schemas/inbox";
import type { CompactionList, MemoryFact, MemoryView } from "../schemas/memory";
import type { RouteDecision } from "../schemas/routing";
import type { Run, RunOrigin, RunStatus, ToolOutputs, TracePage } from "../schemas/run";
import type {
  AgentTurnStatus,
  SessionMessage,
  SessionStatePatch,
  SessionView,
  StoredHistoryItem,
} from "../schemas/session";
import type { TraceContext } from "../telemetry/trace-context";

export type { AddedMessage, LocalAuditRecord, MessageRun };

/**
 * The SessionDO's RPC contract (durable-objects/session/session.ts implements it). Every method
 * returns a `Result`: error codes survive RPC as values.
 */

/** What the Worker passes to `create` once it has validated the request and picked the agent. */
export interface SessionCreateArgs {
  agent: string;
  /** The agent's max_concurrent_sessions; null: no limit, so no capacity lease. */
  capacity: number | null;
  metadata: Record<string, unknown>;
  ttl_s: number;
  /** The first user message. */
  input?: string;
  /** The router's decision when the router picked the agent; recorded as `route.decided`. */
  route?: RouteDecision;
}

export interface SessionAuditPage {
  records: LocalAuditRecord[];
  /** Records not yet in D1. */
  pending: number;
  next_after: string | null;
}

export interface HistoryPage {
  items: StoredHistoryItem[];
  next_after: number | null;
}

/** `POST /v1/handoffs` as the session receives it: the session reads the agents itself. */
export interface StartHandoffArgs {
  request: HandoffRequest;
  idempotency?: { key: string; fingerprint: string };
  /** Tool calls the target must not see (a run's ignored handoff calls): left out of its history with their outputs. */
  hidden_calls?: string[];
  /** The run and tool call that asked for it: its `handoff.initiated` record names them. */
  requested_by?: HandoffOrigin;
}

/** A run's tool call that asked for a handoff. */
export interface HandoffOrigin {
  run_id: string;
  tool_name: string;
}

/** A handoff the request started: `accepted` (202) while it waits for the source. */
export interface HandoffAccepted {
  handoff: Handoff;
  accepted: boolean;
}

/** What a user message asks beyond its text: capabilities it needs (capability triggers may hand it on first). */
export interface MessageTask {
  required_capabilities?: string[];
}

/** How a user message's run is answered or streamed. */
export interface MessageOptions {
  /** Answer once the run is recorded and let it go on without the caller (A2A's `returnImmediately`). */
  background?: boolean;
  /** A streamed run goes on when its stream's client goes away (A2A: a task outlives its streams). */
  detached?: boolean;
  /**
   * The run was admitted against the tenant's quotas already (a new A2A conversation admits its
   * session and first run together), so the session does not ask again.
   */
  admitted?: boolean;
  /** The id the client gave its message (A2A's `messageId`), kept beside Relay's own (docs/a2a.md). */
  client_message_id?: string;
  /**
   * The request's W3C trace context (its valid `traceparent` and `tracestate`): a run the
   * message starts belongs to that trace (docs/observability.md, Propagation).
   */
  trace?: TraceContext;
  /** The A2A method whose request sent the message: the run's server span (docs/observability.md). */
  a2a_method?: RunOrigin["a2a_method"];
}

/** A run and the conversation items of its time (from its start to its end, or now): what an A2A task shows. */
export interface RunTaskView {
  run: Run;
  items: TaskItem[];
}

/** Which of a session's runs a list takes: before a run id, in some statuses, updated since a time. */
export interface RunListQuery {
  before?: string;
  limit: number;
  /** The statuses kept (absent: any). */
  statuses?: RunStatus[];
  /** ISO 8601 as `toISOString` writes it: runs updated at or after it (absent: any). */
  updated_after?: string;
}

/** A page of a session's runs, and how many runs pass the filter in all. */
export interface RunList {
  runs: Run[];
  total: number;
}

/** The client's outputs for the run waiting in requires_action. */
export type ToolOutputsArgs = ToolOutputs;

export interface SessionRpc {
  /** Creates the session; creating it again returns the same session (the id is the idempotency key). */
  create(tenant: string, id: string, args: SessionCreateArgs, actor?: Actor): Promise<Result<SessionView>>;
  get(): Promise<Result<SessionView>>;
  addMessage(message: SessionMessage, caller?: Actor): Promise<Result<AddedMessage>>;
  history(page?: { after?: number; limit?: number }): Promise<Result<HistoryPage>>;
  /** Every compaction of the session's views, oldest first (docs/memory.md). */
  compactions(): Promise<Result<CompactionList>>;
  patchState(patch: SessionStatePatch, actor?: Actor): Promise<Result<SessionView>>;
  setAgentStatus(agent: string, status: AgentTurnStatus, actor?: Actor): Promise<Result<SessionView>>;
  delete(actor?: Actor): Promise<Result<{ deleted: true }>>;
  audit(page?: { after?: string; limit?: number }): Promise<Result<SessionAuditPage>>;
  /** The session's memory of facts (docs/memory.md, Facts): the facts by key and how full it is. */
  memory(): Promise<Result<MemoryView>>;
  /** A person's fact (agent null), written or replaced: MEMORY_FULL past the memory's bounds. */
  writeFact(key: string, value: string, actor?: Actor): Promise<Result<MemoryFact>>;
  /** Deletes a fact: NOT_FOUND for a key the memory does not hold. */
  deleteFact(key: string, actor?: Actor): Promise<Result<{ deleted: true }>>;
  startHandoff(args: StartHandoffArgs, actor?: Actor): Promise<Result<HandoffAccepted>>;
  getHandoff(id: string): Promise<Result<Handoff>>;
  cancelHandoff(id: string, actor?: Actor): Promise<Result<Handoff>>;
  /** The session's inbox items, oldest first. */
  inbox(): Promise<Result<InboxItem[]>>;
  /**
   * A user message: stored, and the current agent's run started (answered when it ends, pauses, or
   * after RUN_WAIT_MS).
   */
  sendMessage(
    content: string,
    actor?: Actor,
    task?: MessageTask,
    options?: MessageOptions,
  ): Promise<Result<MessageRun>>;
  /**
   * A user message whose run is streamed (Server-Sent Events): its live events, then `result` with
   * what sendMessage answers.
   */
  streamMessage(
    content: string,
    actor?: Actor,
    task?: MessageTask,
    options?: MessageOptions,
  ): Promise<Result<{ stream: ReadableStream<Uint8Array> }>>;
  /** A run with the conversation items of its time (at most 200). */
  runTask(id: string): Promise<Result<RunTaskView>>;
  /**
   * The session's runs that pass the filter, newest first, before run id `before`; `total`
   * counts every run that passes it, on any page.
   */
  listRuns(page: RunListQuery): Promise<Result<RunList>>;
  /**
   * The live events of an active run as Server-Sent Events, after event id `after` (else from
   * now), then `result`; `stream` is null when the run has ended.
   */
  subscribeRun(id: string, after?: string): Promise<Result<{ run: Run; stream: ReadableStream<Uint8Array> | null }>>;
  /** A session event: the current agent's event triggers are asked (now, or queued while the session is busy). */
  postEvent(name: string, data: unknown): Promise<Result<{ handoff: Handoff | null; queued: boolean }>>;
  /** A supervisor fan-out from the current agent; answered once it has ended. */
  fanOut(args: FanoutStart, actor?: Actor): Promise<Result<Fanout>>;
  getFanout(id: string): Promise<Result<Fanout>>;
  /** Fires the current agent's explicit trigger for a handoff to `target`. */
  fireTrigger(target: string): Promise<Result<Handoff>>;
  getRun(id: string): Promise<Result<Run>>;
  /** The session's trace events in order, a page after event id `after`. */
  traceEvents(page: { after?: string; limit: number }): Promise<Result<TracePage>>;
  /** A person's answer to an inbox item (a reply, or an approval's decision); moves the run it paused. */
  resolveInbox(
    id: string,
    answer: InboxAnswer,
    actor?: Actor,
    resumedBy?: TraceContext,
  ): Promise<Result<{ item: InboxItem; run: Run | null }>>;
  /** The client's outputs for a run in requires_action; answered once the run has moved on. */
  submitToolOutputs(args: ToolOutputsArgs, actor?: Actor, resumedBy?: TraceContext): Promise<Result<{ run: Run }>>;
  /** Cancels an active run: its model call stopped, what it wrote kept as cut, the run `cancelled`. */
  cancelRun(id: string, actor?: Actor): Promise<Result<Run>>;
}
