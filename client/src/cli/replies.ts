import { type Answer, type RelayClient, unwrap } from "../client.ts";
import {
  anyOf,
  arrayOf,
  boolean,
  byField,
  checked,
  maybe,
  number,
  object,
  recordOf,
  type Shape,
  string,
  unknownValue,
} from "../shape.ts";
import type { LiveEvent } from "../types.ts";

/**
 * The parts of Relay's answers the commands read, checked where each answer comes in: a
 * body of another shape ends the command as `BAD_REPLY` (docs/cli.md, Errors) instead of a
 * TypeError in a table or a line. Each shape names the fields its commands read, no more
 * (the types are the generated ones; a newer Relay may add fields).
 */

const RUN_ERROR = object({ code: string, message: string });

const PENDING = byField("kind", {
  human: object({ inbox_id: string, agent: string, tool_call_id: maybe(string) }),
  approval: object({
    agent: string,
    approvals: arrayOf(
      object({ inbox_id: string, tool_call: object({ name: string, arguments: string }), decision: maybe(string) }),
    ),
  }),
  input: object({ agent: string }),
  client_tools: object({ agent: string, tool_calls: arrayOf(object({ id: string, name: string, arguments: string })) }),
});

/** A run as chat and the inbox read it (with or without its events). */
export const RUN = object({
  id: string,
  status: string,
  agent: string,
  output: maybe(string),
  output_agent: maybe(string),
  error: maybe(RUN_ERROR),
  pending: maybe(PENDING),
});

export const AGENT = object({
  definition: object({
    name: string,
    kind: string,
    title: maybe(string),
    description: maybe(string),
    enabled: maybe(boolean),
    instructions: maybe(string),
    triggers: maybe(object({ keywords: maybe(arrayOf(string)) })),
    handoffs: maybe(arrayOf(anyOf(string, object({ to: string })))),
    tools: maybe(object({ allow: maybe(arrayOf(string)) })),
  }),
  updated_at: string,
});

const NAMES = arrayOf(string);

export const ROUTE_DECISION = object({
  agent: maybe(string),
  method: string,
  strategy: string,
  threshold: number,
  confidence: number,
  score: number,
  matched_keywords: NAMES,
  matched_patterns: NAMES,
  candidates: arrayOf(
    object({ agent: string, score: number, confidence: number, matched_keywords: NAMES, matched_patterns: NAMES }),
  ),
  fallback: maybe(
    object({ strategy: string, reason: string, agents: maybe(arrayOf(object({ name: string, description: string }))) }),
  ),
  llm: maybe(
    object({
      provider: string,
      model: string,
      duration_ms: number,
      tool_call: maybe(object({ name: string })),
      error: maybe(string),
    }),
  ),
});

/** `POST /v1/route/replay`: what a draft would move. */
const EXAMPLES = object({ count: number, examples: arrayOf(string) });
export const REPLAY_REPORT = object({
  source: string,
  totals: object({
    inputs: number,
    replayed: number,
    moved: number,
    would_ask_llm: object({ current: number, draft: number }),
  }),
  moves: arrayOf(object({ from: string, to: string, count: number, examples: arrayOf(string) })),
  fallback: object({ entered: EXAMPLES, left: EXAMPLES }),
});

export const ROUTING_CONFIG_VIEW = object({
  config: recordOf(unknownValue),
  sources: recordOf(string),
  stored: maybe(recordOf(unknownValue)),
  warnings: arrayOf(string),
});

export const SESSION = object({ id: string, current_agent: maybe(string) });

export const INBOX_LIST_ITEM = object({
  id: string,
  kind: string,
  status: string,
  agent: maybe(string),
  created_at: string,
  reason: string,
});

export const INBOX_ITEM = object({
  id: string,
  kind: string,
  status: string,
  agent: maybe(string),
  session_id: maybe(string),
  run_id: maybe(string),
  reason: string,
  details: recordOf(unknownValue),
  expires_at: maybe(string),
  decision: maybe(string),
  reply: maybe(string),
  resolved_by: maybe(string),
});

/** `POST /v1/inbox/:id/resolve`: the item and the run it resumed. */
export const INBOX_RESOLVED = object({ item: object({ id: string }), run: maybe(RUN) });

/** `POST /v1/sessions/:id/tool-outputs`, and a run stream's result. */
export const WITH_RUN = object({ run: RUN });

export const AUDIT_RECORD = object({
  at: string,
  action: string,
  agent: maybe(string),
  actor: maybe(string),
  session_id: maybe(string),
  details: maybe(recordOf(unknownValue)),
});

/** `POST /v1/handoffs`: the handoff chat asked for (`@<agent>`, `@auto`) and where it stands. */
export const HANDOFF = object({ id: string, status: string });

/** A step of a session's trace (`GET /v1/sessions/:id/trace`), as chat's `/agents trace` prints it. */
export const TRACE_STEP = object({
  event_type: string,
  timestamp: string,
  agent_name: string,
  duration_ms: number,
  error: maybe(string),
  details: object({
    model: maybe(string),
    tokens: maybe(object({ prompt: number, completion: number, total: number })),
    tool_name: maybe(string),
    from_agent: maybe(string),
    to_agent: maybe(string),
    routing_method: maybe(string),
    outcome: maybe(string),
  }),
});

/** A record of a session's own audit trail, as chat's `/agents handoff-chain` reads it. */
export const SESSION_AUDIT_RECORD = object({
  action: string,
  at: string,
  handoff_id: maybe(string),
  details: recordOf(unknownValue),
});

/** One fact of a session's memory, as `relay memory` prints it. */
export const MEMORY_FACT = object({ key: string, value: string, agent: maybe(string), updated_at: string });

/** `GET /v1/sessions/:id/memory`. */
export const MEMORY_VIEW = object({
  facts: arrayOf(MEMORY_FACT),
  chars: number,
  limits: object({ facts: number, total_chars: number }),
});

const COUNTS = {
  requests: number,
  sessions: number,
  runs: number,
  handoffs: number,
  tool_calls: number,
  model_calls: number,
  input_tokens: number,
  output_tokens: number,
  d1_rows_written: number,
  d1_bytes_written: number,
  refused: recordOf(number),
};

/** `GET /v1/usage`: the buckets, totals, models and quotas `relay usage` prints. */
export const USAGE_REPORT = object({
  from: string,
  to: string,
  granularity: string,
  buckets: arrayOf(object({ start: string, ...COUNTS })),
  totals: object({
    ...COUNTS,
    models: arrayOf(
      object({ provider: string, model: string, calls: number, input_tokens: number, output_tokens: number }),
    ),
  }),
  d1_bytes_stored_estimate: number,
  quotas: arrayOf(
    object({
      limit: string,
      value: maybe(number),
      used: maybe(number),
      window: maybe(string),
      resets_at: maybe(string),
    }),
  ),
});

const TRACE = object({
  agent_name: string,
  error: maybe(string),
  details: object({ tool_name: maybe(string), routing_confidence: maybe(number) }),
});

/** The data of each live event type the chat and tail read; other types are shown by name only. */
const EVENT_DATA: Record<string, Shape> = {
  route: TRACE,
  handoff: TRACE,
  tool_call: TRACE,
  agent_error: TRACE,
  guardrail: TRACE,
  agent_started: TRACE,
  agent_completed: TRACE,
  llm_call: TRACE,
  message: object({
    id: maybe(string),
    role: string,
    type: maybe(string),
    content: maybe(string),
    cut: maybe(boolean),
  }),
  approval_required: object({ prompt: maybe(string) }),
  run_started: RUN,
  run_paused: RUN,
  run_resumed: RUN,
  run_completed: RUN,
  run_failed: RUN,
  run_cancelled: RUN,
  handoff_status: object({ action: string }),
  "message.delta": object({ message_id: string, agent: string, delta: string }),
  "message.retracted": object({ agent: string, code: string }),
};

const EVENT = object({ id: string, type: string, at: string, run_id: maybe(string) });

/** A live event whose envelope, and data when its type is known, are what the chat and tail read. */
export function checkedEvent(event: unknown, url: string, request: string): LiveEvent {
  const live = checked<LiveEvent>(event, EVENT, url, request);
  if (Object.hasOwn(EVENT_DATA, live.type))
    checked(live.data, EVENT_DATA[live.type]!, url, `${request} (a ${live.type} event)`, "data");
  return live;
}

/** A call's data once it fits `shape`: `await reply(relay, relay.api.GET(…), AGENT, "GET /v1/agents/{name}")`. */
export async function reply<D>(
  relay: RelayClient,
  call: Promise<Answer<D>>,
  shape: Shape,
  request: string,
): Promise<D> {
  return checked<D>(await unwrap(call, relay.url, request), shape, relay.url, request);
}

export { checked };
