/**
 * The A2A executor (docs/a2a.md, Remote agents): a `kind: a2a` agent's turn is a
 * SendMessage to the remote agent its card describes — SendStreamingMessage when the card
 * offers streaming, its text pieces handed on as they come — sent with the official SDK's
 * client over the outbound policy (card and calls alike, bodies capped, redirects never
 * followed), signed when the card asks for it. Every outcome is a value: an answer (text,
 * or a handoff by Relay's data part), a request for input, or a coded failure.
 */
import { AgentCard, type StreamResponse, TaskState } from "@a2a-js/sdk";
import { ClientFactory, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import type { ErrorCode } from "../errors/codes";
import {
  acceptsJson,
  cardAsksSigning,
  jsonRpcInterface,
  newInput,
  RemoteAnswer,
  type RemoteThread,
  turnMessage,
} from "../interop/a2a-remote";
import { deadline } from "../lib/deadline";
import { readCapped } from "../lib/read-capped";
import { excerpt } from "../providers/failures";
import type { OnText, ToolCall } from "../providers/types";
import { transferToolName } from "../routing/llm/tool-names";
import { returnToolName } from "../runtime/agent-tools";
import { type AgentTurnRequest, type AgentTurnResult, redactTurn } from "../runtime/agent-turn";
import type { CallFacts } from "../schemas/run";
import { deliveryHeaders, deliveryTarget, type OutboundCall, outboundFetch, unusableSecret } from "./fetch";
import type { OutboundPolicy } from "./policy";
import { secretRedactor } from "./redact";
import { outboundCause, sdkFetch } from "./sdk-fetch";

/** The largest card Relay reads; a larger one fails the turn unread past it. */
export const MAX_CARD_BYTES = 64 * 1024;
/** The largest reply (or stream) Relay reads from a remote agent. */
export const MAX_REMOTE_REPLY_BYTES = 1024 * 1024;
/** How long an isolate keeps a card it read. */
export const CARD_TTL_MS = 5 * 60_000;
/** How often a task the agent left working is polled (a server that answers before the task ends). */
const POLL_MS = 500;

/** What the executor needs of the agent. */
export interface RemoteAgent {
  name: string;
  card_url: string;
  signing?: "signed" | "none" | undefined;
}

export interface A2aCallOptions {
  /**
   * The tenant, the address policy in force, how requests are signed when the card asks (the
   * agent's vault `signing_secret`, else the tenant's) and the headers sent (its credentials).
   */
  outbound: OutboundCall;
  timeoutMs: number;
  /** The thread Relay keeps with the agent in this session. */
  thread: RemoteThread;
  /** The message's id: one per turn number of a run, so a repeated turn is the same message. */
  messageId: string;
  onText?: OnText;
  /** Aborted when the run is cancelled. */
  signal?: AbortSignal;
  now?: () => number;
}

/** A turn's result with the thread as it is after it, and whether the agent asked for input. */
export type A2aTurnResult = AgentTurnResult & { thread?: RemoteThread; input_required?: boolean };

type Failure = { ok: false; code: ErrorCode; message: string };
/** What the turn's trace event says of the call: the method sent, and the remote task as last seen. */
type A2aFacts = NonNullable<CallFacts["a2a"]>;
/** Filled in as the call goes, so that a call cut short still says what it knew. */
interface CallSeen {
  a2a?: A2aFacts;
}
const failure = (code: ErrorCode, message: string): Failure => ({ ok: false, code, message });

const cards = new Map<string, { card: AgentCard; expires: number }>();

/** The agent's card: read through the policy, at most MAX_CARD_BYTES, JSON, kept CARD_TTL_MS per isolate. */
export async function readCard(
  agent: RemoteAgent,
  policy: OutboundPolicy,
  signal: AbortSignal,
  now = Date.now(),
): Promise<{ ok: true; card: AgentCard } | Failure> {
  const cached = cards.get(agent.card_url);
  if (cached && cached.expires > now) return { ok: true, card: cached.card };
  const bad = (why: string) => failure("REMOTE_AGENT_CARD_INVALID", `${agent.name}: the agent card ${why}`);
  const result = await outboundFetch(
    agent.card_url,
    { headers: { accept: "application/json", "A2A-Version": "1.0", "user-agent": "Relay" }, signal },
    policy,
  );
  if (result.kind === "refused")
    return failure(
      "ENDPOINT_NOT_ALLOWED",
      `${agent.name}: the card_url is not allowed (${result.rule}): ${result.message}`,
    );
  if (result.kind === "failed") return bad(`could not be read: ${result.message}`);
  const { response } = result;
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    return bad(`was answered with HTTP ${response.status}`);
  }
  const read = await readCapped(response, MAX_CARD_BYTES, "refuse");
  if (!read.ok)
    return bad(
      read.reason === "oversize" ? `is larger than ${MAX_CARD_BYTES} bytes` : `could not be read: ${read.message}`,
    );
  let json: unknown;
  try {
    json = JSON.parse(read.text);
  } catch {
    return bad(`is not JSON: ${excerpt(read.text, 120)}`);
  }
  if (!json || typeof json !== "object" || Array.isArray(json)) return bad("is not a JSON object");
  const card = AgentCard.fromJSON(json);
  const endpoint = jsonRpcInterface(card);
  if (!endpoint.ok) return bad(`is not usable: ${endpoint.message}`);
  cards.set(agent.card_url, { card, expires: now + CARD_TTL_MS });
  return { ok: true, card };
}

/** The tool call a handoff by data part stands for: a return when the target handed the session over, else a transfer. */
function transferCall(target: string, reason: string, offered: ReadonlySet<string>, id: string): ToolCall {
  const back = returnToolName(target);
  const name = offered.has(back) ? back : transferToolName(target);
  return { id, name, arguments: JSON.stringify({ reason: reason || `${target} should take over` }) };
}

/**
 * Runs one turn on the remote agent, within `timeoutMs`. What it writes back passes through
 * the redactor of the headers sent (src/outbound/redact.ts), streamed pieces one by one.
 */
export async function callA2aAgent(
  agent: RemoteAgent,
  turn: AgentTurnRequest,
  options: A2aCallOptions,
): Promise<A2aTurnResult> {
  const { headers } = options.outbound;
  const redact = secretRedactor(headers.ok ? Object.values(headers.values) : []);
  const onText = options.onText;
  const result = await runTurn(agent, turn, onText ? { ...options, onText: (text) => onText(redact(text)) } : options);
  return redactTurn(result, redact);
}

async function runTurn(agent: RemoteAgent, turn: AgentTurnRequest, options: A2aCallOptions): Promise<A2aTurnResult> {
  const now = options.now ?? Date.now;
  const started = now();
  const took = () => Math.max(0, now() - started);
  const { signal: timeout, clear } = deadline(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const seen: CallSeen = {};
  const fail = (f: Failure): A2aTurnResult => ({ ...f, duration_ms: took(), ...factsOf(seen) });
  // The race also covers a reply that stalls mid-stream, whatever the transport does with the signal.
  const aborted = new Promise<never>((_, reject) => {
    const stop = () => reject(signal.reason);
    if (signal.aborted) stop();
    else signal.addEventListener("abort", stop, { once: true });
  });
  aborted.catch(() => undefined);
  try {
    return await Promise.race([exchange(agent, turn, options, signal, took, seen), aborted]);
  } catch (error) {
    if (timeout.aborted) return fail(timedOut(agent, options));
    if (options.signal?.aborted) return fail(failure("RUN_CANCELLED", `${agent.name}: the run was cancelled`));
    const cause = outboundCause(error);
    if (cause?.failure === "refused")
      return fail(
        failure(
          "ENDPOINT_NOT_ALLOWED",
          `${agent.name}: the agent's endpoint is not allowed (${cause.rule}): ${cause.message}`,
        ),
      );
    const why = cause ? cause.message : excerpt(error instanceof Error ? error.message : String(error), 300);
    return fail(failure("REMOTE_AGENT_ERROR", `${agent.name}: ${why}`));
  } finally {
    clear();
  }
}

/** The turn itself: the card, the message, the answer (streamed or whole, polled while its task works). */
async function exchange(
  agent: RemoteAgent,
  turn: AgentTurnRequest,
  options: A2aCallOptions,
  signal: AbortSignal,
  took: () => number,
  seen: CallSeen,
): Promise<A2aTurnResult> {
  const now = options.now ?? Date.now;
  const fail = (f: Failure): A2aTurnResult => ({ ...f, duration_ms: took(), ...factsOf(seen) });
  const loaded = await readCard(agent, options.outbound.policy, signal);
  if (!loaded.ok) return fail(signal.aborted ? timedOut(agent, options) : loaded);
  const { card } = loaded;
  const { signing, headers } = options.outbound;
  if (!headers.ok) return fail(failure(headers.code, `${agent.name}: ${headers.message}`));
  const sign = agent.signing !== "none" && (cardAsksSigning(card) || agent.signing === "signed");
  if (sign && !signing.ok) return fail(failure(signing.code, `${agent.name}: ${signing.message}`));
  if (sign && signing.ok && unusableSecret(signing))
    return fail(failure("REMOTE_AGENT_ERROR", `${agent.name}: ${signing.by} is not a Standard Webhooks secret`));
  const fetch = sdkFetch({
    policy: options.outbound.policy,
    maxBodyBytes: MAX_REMOTE_REPLY_BYTES,
    headers: headers.values,
    ...(options.outbound.trace ? { trace: options.outbound.trace } : {}),
    ...(sign && signing.ok
      ? {
          sign: async (body: string, headers: Headers) => {
            const signed = await deliveryHeaders(signing.secrets, options.messageId, Math.floor(now() / 1000), body);
            for (const [name, value] of Object.entries(signed)) headers.set(name, value);
          },
        }
      : {}),
  });
  const client = await new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl: fetch })],
    preferredTransports: ["JSONRPC"],
  }).createFromAgentCard(card);

  const { message, handoff_id } = turnMessage({
    message_id: options.messageId,
    text: newInput(turn.messages),
    thread: options.thread,
    context: turn.context,
    relay: {
      tenant: options.outbound.tenant,
      target: deliveryTarget.agent(agent.name),
      session_id: turn.session_id,
      run_id: turn.run_id,
      agent: turn.agent,
    },
    accepts_json: acceptsJson(card),
  });
  const answer = new RemoteAnswer(options.onText);
  const params = {
    tenant: "",
    message,
    configuration: {
      acceptedOutputModes: ["text/plain", "application/json"],
      taskPushNotificationConfig: undefined,
      returnImmediately: false,
    },
    metadata: undefined,
  };
  const streamed = card.capabilities?.streaming === true;
  const call: A2aFacts = { method: streamed ? "SendStreamingMessage" : "SendMessage" };
  seen.a2a = call;
  if (streamed) {
    for await (const event of client.sendMessageStream(params, { signal })) {
      noteTask(call, event.payload);
      answer.add(event);
    }
  } else {
    const reply = await client.sendMessage(params, { signal });
    noteTask(call, "messageId" in reply ? { $case: "message", value: reply } : { $case: "task", value: reply });
    answer.addReply(reply);
  }
  // A server that answered before its task ended: the task is polled until it does.
  for (let open = answer.openTask; open; open = answer.openTask) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    signal.throwIfAborted();
    const task = await client.getTask({ tenant: "", id: open.id, historyLength: 0 }, { signal });
    noteTask(call, { $case: "task", value: task });
    answer.addReply(task);
  }
  const outcome = answer.outcome();
  const thread = (context_id: string | null, task_id: string | null): RemoteThread => ({
    context_id: context_id ?? options.thread.context_id,
    task_id,
    handoff_id,
  });
  const model = card.name || agent.name;
  switch (outcome.kind) {
    case "failed":
      return {
        ...fail(failure("REMOTE_AGENT_ERROR", `${agent.name}: ${outcome.message}`)),
        thread: thread(null, null),
      };
    case "input":
      return {
        ok: true,
        response: { content: outcome.text, tool_calls: [] },
        model,
        duration_ms: took(),
        streamed,
        facts: { a2a: { ...call } },
        input_required: true,
        thread: thread(outcome.context_id, outcome.task_id),
      };
    case "working":
      return fail(timedOut(agent, options));
    case "answer": {
      const offered = new Set(turn.tools.map((t) => t.function.name));
      const calls = outcome.transfer
        ? [transferCall(outcome.transfer.target, outcome.transfer.reason, offered, `call_${options.messageId}`)]
        : [];
      if (outcome.text === "" && calls.length === 0)
        return fail(failure("REMOTE_AGENT_ERROR", `${agent.name}: the agent answered with no text`));
      return {
        ok: true,
        response: { content: outcome.text === "" ? null : outcome.text, tool_calls: calls },
        model,
        duration_ms: took(),
        streamed,
        facts: { a2a: { ...call } },
        thread: thread(outcome.context_id, null),
      };
    }
  }
}

function timedOut(agent: RemoteAgent, options: A2aCallOptions): Failure {
  return failure(
    "REMOTE_AGENT_TIMEOUT",
    `${agent.name}: no answer from the remote agent within ${options.timeoutMs} ms`,
  );
}

/**
 * Notes on `call` the remote task a reply or stream event is about, and the task's state
 * when the event says it (a message names its task, if any, but not the state).
 */
function noteTask(call: A2aFacts, payload: StreamResponse["payload"]): void {
  if (!payload) return;
  switch (payload.$case) {
    case "task":
      setTask(call, payload.value.id, payload.value.status?.state ?? TaskState.TASK_STATE_WORKING);
      return;
    case "statusUpdate":
      setTask(call, payload.value.taskId, payload.value.status?.state ?? TaskState.TASK_STATE_WORKING);
      return;
    case "message":
    case "artifactUpdate":
      if (payload.value.taskId && call.task_id === undefined) call.task_id = payload.value.taskId;
      return;
  }
}

function setTask(call: A2aFacts, id: string, state: TaskState): void {
  if (id) call.task_id = id;
  // A value the SDK does not know has no TASK_STATE_* name to give.
  const name = TaskState[state];
  if (name?.startsWith("TASK_STATE_")) call.task_state = name;
  else delete call.task_state;
}

const factsOf = (seen: CallSeen): { facts?: CallFacts } => (seen.a2a ? { facts: { a2a: { ...seen.a2a } } } : {});
