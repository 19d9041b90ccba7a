/**
 * The webhook executor: a `kind: webhook` agent's turn is POSTed to the agent's endpoint as a
 * Standard Webhooks delivery, and the endpoint's JSON reply becomes the turn's response.
 * Every outcome is a value (never a throw), so the run loop records failures like any other.
 *
 * The delivery body (JSON, UTF-8):
 *   { "type": "agent.turn", "timestamp": "<ISO 8601>", "tenant", "target": "agent:<name>",
 *     "data": { "session_id", "run_id", "agent", "messages", "tools", "context" } }
 * `tenant` and `target` are signed with the rest, so an endpoint can tell a delivery meant for
 * another tenant or agent (docs/security.md, What is signed).
 * `messages` and `tools` are in the OpenAI Chat Completions wire shape, so an endpoint can
 * hand them straight to a model; `context` is the HandoffContext or null.
 * The reply (2xx, JSON): { "output"?: string, "tool_calls"?: [{ "id"?, "name", "arguments" }] }.
 */
import * as z from "zod";
import type { ErrorCode } from "../errors/codes";
import { deadline } from "../lib/deadline";
import { readCapped } from "../lib/read-capped";
import { ulid } from "../lib/ulid";
import { excerpt } from "../providers/failures";
import type { ChatResponse, ToolCall } from "../providers/types";
import { argumentsText, describeIssue, wireMessage } from "../providers/wire";
import { type AgentTurnRequest, type AgentTurnResult, redactTurn } from "../runtime/agent-turn";
import {
  deliveryHeaders,
  deliveryTarget,
  ERROR_EXCERPT_CHARS,
  errorExcerpt,
  type OutboundCall,
  outboundFetch,
  unusableSecret,
} from "./fetch";
import { secretRedactor } from "./redact";

/** The most reply body Relay reads; a longer reply fails the turn unread past this. */
export const MAX_REPLY_BYTES = 1024 * 1024;
/** A reply may ask for this many tool calls at most in one turn. */
export const MAX_REPLY_TOOL_CALLS = 128;

/** What the executor needs of an agent definition. */
export interface WebhookAgent {
  name: string;
  endpoint: string;
}

export interface WebhookCallOptions {
  /**
   * The tenant, the address policy in force, how the delivery is signed (resolved by the
   * caller: the agent's vault `signing_secret`, else the tenant's signing secret, none when
   * the agent says `signing: none`; each secret signs) and the headers it sends.
   */
  outbound: OutboundCall;
  /** Deadline for the whole exchange, connection to last byte of the reply. */
  timeoutMs: number;
  /**
   * The delivery's `webhook-id`: the same for every attempt at one turn of a run (see
   * {@link turnDeliveryId}), so the endpoint can drop a repeat. Default: a new id.
   */
  id?: string;
  /** Milliseconds since the epoch (default Date.now): webhook-timestamp and the body's timestamp. */
  now?: () => number;
}

/** The `webhook-id` of a run's turn: one per turn number, so a turn resumed after a restart is the same delivery. */
export const turnDeliveryId = (runId: string, turn: number): string => `turn_${turn}_${runId}`;

// Lenient on unknown fields (an endpoint may add its own), strict on the types of known ones.
// Tool calls come flat, or nested the OpenAI way so a model's answer can be passed through.
const ReplyArguments = z.union([z.string(), z.record(z.string(), z.unknown())]).optional();
const FlatCall = z.object({ id: z.string().min(1).optional(), name: z.string().min(1), arguments: ReplyArguments });
const NestedCall = z.object({
  id: z.string().min(1).optional(),
  type: z.literal("function").optional(),
  function: z.object({ name: z.string().min(1), arguments: ReplyArguments }),
});
const WebhookReply = z.object({
  output: z.string().nullish(),
  tool_calls: z
    .array(z.union([FlatCall, NestedCall]))
    .max(MAX_REPLY_TOOL_CALLS)
    .nullish(),
});
type WebhookReply = z.infer<typeof WebhookReply>;

type Outcome = { ok: true; response: ChatResponse } | { ok: false; code: ErrorCode; message: string };

const fail = (code: ErrorCode, message: string): Outcome => ({ ok: false, code, message });

/**
 * Runs one turn on the agent's endpoint. Failures: `ENDPOINT_NOT_ALLOWED` (the address policy
 * refuses the endpoint: nothing is sent), `WEBHOOK_TIMEOUT` (deadline passed), `WEBHOOK_ERROR`
 * (unreachable, non-2xx with its status and a short excerpt, or an unusable secret),
 * `WEBHOOK_INVALID_REPLY` (oversize, not JSON, wrong shape, nothing in it),
 * `DEPENDENCY_UNAVAILABLE` (the signing secret could not be read).
 */
export async function callWebhookAgent(
  agent: WebhookAgent,
  turn: AgentTurnRequest,
  options: WebhookCallOptions,
): Promise<AgentTurnResult> {
  const now = options.now ?? Date.now;
  const started = now();
  const redact = secretRedactor(options.outbound.headers.ok ? Object.values(options.outbound.headers.values) : []);
  const done = (outcome: Outcome): AgentTurnResult => {
    const duration_ms = Math.max(0, now() - started);
    return redactTurn(
      outcome.ok
        ? { ok: true, response: outcome.response, model: "webhook", duration_ms }
        : { ...outcome, duration_ms },
      redact,
    );
  };

  const { signing, headers } = options.outbound;
  if (!signing.ok) return done(fail(signing.code, `${agent.name}: ${signing.message}`));
  if (!headers.ok) return done(fail(headers.code, `${agent.name}: ${headers.message}`));
  if (unusableSecret(signing)) {
    return done(fail("WEBHOOK_ERROR", `${signing.by} is not a Standard Webhooks secret (expected whsec_ + base64)`));
  }

  const { signal, clear } = deadline(options.timeoutMs);
  const timedOut = new Promise<Outcome>((resolve) => {
    const onAbort = () =>
      resolve(fail("WEBHOOK_TIMEOUT", `${agent.name}: no reply from the webhook within ${options.timeoutMs} ms`));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  // The race also covers a reply body that stalls mid-stream; exchange() never rejects.
  const id = options.id ?? `msg_${ulid()}`;
  return done(
    await Promise.race([
      exchange(agent, turn, options.outbound, signing.secrets, id, started, signal),
      timedOut,
    ]).finally(clear),
  );
}

async function exchange(
  agent: WebhookAgent,
  turn: AgentTurnRequest,
  outbound: OutboundCall,
  secrets: readonly string[],
  id: string,
  nowMs: number,
  signal: AbortSignal,
): Promise<Outcome> {
  const body = JSON.stringify(deliveryBody(turn, outbound.tenant, nowMs));
  const timestamp = Math.floor(nowMs / 1000);
  const headers: Record<string, string> = {
    ...(outbound.headers.ok ? outbound.headers.values : {}),
    "content-type": "application/json",
    accept: "application/json",
    "user-agent": "Relay",
    ...(await deliveryHeaders(secrets, id, timestamp, body)),
  };

  const result = await outboundFetch(
    agent.endpoint,
    { method: "POST", headers, body, signal },
    outbound.policy,
    outbound.trace,
  );
  if (result.kind === "refused")
    return fail(
      "ENDPOINT_NOT_ALLOWED",
      `${agent.name}: the endpoint is not allowed (${result.rule}): ${result.message}`,
    );
  if (result.kind === "failed")
    return fail("WEBHOOK_ERROR", `${agent.name}: the webhook could not be reached: ${result.message}`);
  const { response } = result;

  if (response.status < 200 || response.status > 299) {
    const text = await errorExcerpt(response);
    const hint = response.status === 401 || response.status === 403 ? unsignedHint(secrets) : "";
    const location = response.headers.get("location");
    const redirect =
      response.status >= 300 && response.status < 400
        ? ` (redirects are not followed${location ? `; location: ${excerpt(location, ERROR_EXCERPT_CHARS)}` : ""})`
        : "";
    const detail = text !== "" ? `: ${text}` : "";
    return fail(
      "WEBHOOK_ERROR",
      `${agent.name}: the webhook answered HTTP ${response.status}${redirect}${hint}${detail}`,
    );
  }

  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > MAX_REPLY_BYTES) {
    await response.body?.cancel().catch(() => undefined);
    return fail("WEBHOOK_INVALID_REPLY", `${agent.name}: the reply is larger than ${MAX_REPLY_BYTES} bytes`);
  }
  const read = await readCapped(response, MAX_REPLY_BYTES, "refuse");
  if (!read.ok) {
    return read.reason === "oversize"
      ? fail("WEBHOOK_INVALID_REPLY", `${agent.name}: the reply is larger than ${MAX_REPLY_BYTES} bytes`)
      : read.reason === "encoding"
        ? fail("WEBHOOK_INVALID_REPLY", `${agent.name}: the reply is not UTF-8 text`)
        : fail("WEBHOOK_ERROR", `${agent.name}: the reply could not be read: ${read.message}`);
  }
  return interpret(agent, read.text);
}

function deliveryBody(turn: AgentTurnRequest, tenant: string, nowMs: number): Record<string, unknown> {
  return {
    type: "agent.turn",
    timestamp: new Date(nowMs).toISOString(),
    tenant,
    target: deliveryTarget.agent(turn.agent),
    data: {
      session_id: turn.session_id,
      run_id: turn.run_id,
      agent: turn.agent,
      messages: turn.messages.map(wireMessage),
      tools: turn.tools,
      context: turn.context,
    },
  };
}

function interpret(agent: WebhookAgent, text: string): Outcome {
  if (text.trim() === "")
    return fail("WEBHOOK_INVALID_REPLY", `${agent.name}: the reply is empty (expected JSON with output or tool_calls)`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return fail("WEBHOOK_INVALID_REPLY", `${agent.name}: the reply is not JSON: ${excerpt(text, 120)}`);
  }
  const parsed = WebhookReply.safeParse(json);
  if (!parsed.success)
    return fail(
      "WEBHOOK_INVALID_REPLY",
      `${agent.name}: the reply is not { output?, tool_calls? }: ${describeIssue(parsed.error)}`,
    );
  const reply = parsed.data;
  const tool_calls = toolCalls(reply);
  const content = reply.output ? reply.output : null;
  if (tool_calls.length === 0 && content === null) {
    return fail("WEBHOOK_INVALID_REPLY", `${agent.name}: the reply has neither output nor tool_calls`);
  }
  return { ok: true, response: { content, tool_calls } };
}

function toolCalls(reply: WebhookReply): ToolCall[] {
  // Ids are unique per session, not positional: the conversation keeps every turn's calls.
  return (reply.tool_calls ?? []).map((call) => {
    const { name, arguments: args } = "function" in call ? call.function : call;
    return { id: call.id ?? `call_${ulid().toLowerCase()}`, name, arguments: argumentsText(args) };
  });
}

function unsignedHint(secrets: readonly string[]): string {
  return secrets.length === 0 ? " (the delivery was unsigned: the agent's definition says signing: none)" : "";
}
