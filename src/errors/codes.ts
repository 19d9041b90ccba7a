/**
 * Every error code Relay returns, with its HTTP status. The one place codes meet statuses:
 * domain code and Durable Objects speak codes, only the HTTP layer reads this table.
 */
export const ERROR_STATUS = {
  // 400 — the request itself is malformed
  INVALID_JSON: 400,
  VALIDATION_FAILED: 400,
  INVALID_PATTERN: 400,
  /** An agent whose patterns would take the tenant past its pattern budget (docs/scaling.md). */
  PATTERN_BUDGET_EXCEEDED: 400,
  INVALID_CONFIG: 400,
  INVALID_AGENT_FILE: 400,
  INVALID_CONDITION: 400,
  /** A handoff condition or trigger expression in an agent definition does not parse. */
  INVALID_EXPRESSION: 400,
  INVALID_CURSOR: 400,
  /** A shard number the deployment does not bind (docs/operations.md, Shards). */
  UNKNOWN_SHARD: 400,
  JSON_TOO_DEEP: 400,
  /** Tool outputs that do not answer exactly the calls the run waits for. */
  TOOL_OUTPUTS_MISMATCH: 400,
  /** An inbox answer of the wrong shape for the item (a reply to an approval, a decision to a question). */
  INBOX_ANSWER_MISMATCH: 400,
  /**
   * An address Relay will not call on a tenant's behalf (the outbound policy, docs/security.md):
   * refused when registered, and a call refused when made (a run error or tool output).
   */
  ENDPOINT_NOT_ALLOWED: 400,
  /**
   * A definition names a secret its tenant's vault does not hold (docs/security.md, The tenant
   * vault): refused when registered, and a call's error when made (a run error or tool output).
   */
  UNKNOWN_SECRET: 400,
  // 401 — who is calling
  UNAUTHORIZED: 401,
  /** A webhook whose signature or timestamp does not verify. */
  WEBHOOK_REJECTED: 401,
  // 404 — unknown things
  NOT_FOUND: 404,
  AGENT_NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  HANDOFF_NOT_FOUND: 404,
  RUN_NOT_FOUND: 404,
  INBOX_ITEM_NOT_FOUND: 404,
  TOOL_NOT_FOUND: 404,
  /** A webhook from a source Relay has no secret for. */
  WEBHOOK_SOURCE_NOT_FOUND: 404,
  /** An explicit trigger fired for a handoff the current agent has no explicit trigger for. */
  TRIGGER_NOT_FOUND: 404,
  COLLABORATION_NOT_FOUND: 404,
  /** No secret of that name in the tenant's vault. */
  SECRET_NOT_FOUND: 404,
  /** The operator named a tenant RELAY_API_KEYS does not list. */
  TENANT_NOT_FOUND: 404,
  // 409 — conflicts with current state
  ROUTING_DISABLED: 409,
  HANDOFF_IN_PROGRESS: 409,
  /** The tenant is being moved to another shard than the one asked for; that move finishes first. */
  SHARD_MOVE_IN_PROGRESS: 409,
  NOT_CURRENT_AGENT: 409,
  HANDOFF_NOT_CANCELLABLE: 409,
  IDEMPOTENCY_KEY_REUSED: 409,
  INVALID_TRANSITION: 409,
  RUN_IN_PROGRESS: 409,
  INBOX_ITEM_CLOSED: 409,
  /** Tool outputs posted when no run waits for them. */
  RUN_NOT_AWAITING_OUTPUTS: 409,
  /** A run that has already ended cannot be cancelled. */
  RUN_NOT_CANCELLABLE: 409,
  /** A run's error when it was cancelled (the caller's request, or its only listener went away). */
  RUN_CANCELLED: 409,
  /** A secret an agent or tool still names is not deleted (details.used_by says which). */
  SECRET_IN_USE: 409,
  /** The tenant's vault holds as many secrets as it may. */
  VAULT_FULL: 409,
  /** A session's memory holds as many facts, or characters, as it may (docs/memory.md, Facts). */
  MEMORY_FULL: 409,
  // 410 — it was here, it expired
  SESSION_EXPIRED: 410,
  // 413 — too large
  PAYLOAD_TOO_LARGE: 413,
  // 422 — well-formed, but a rule of the domain says no
  HANDOFF_NOT_ALLOWED: 422,
  CONDITION_NOT_MET: 422,
  MAX_DEPTH_EXCEEDED: 422,
  CIRCULAR_HANDOFF: 422,
  CAPABILITY_MISMATCH: 422,
  AGENT_UNAVAILABLE: 422,
  NOTHING_TO_RETURN: 422,
  NO_ROUTE: 422,
  MAX_TURNS_EXCEEDED: 422,
  /**
   * A turn's input would not fit the agent's budget even compacted as far as it goes, or the
   * agent's memory strategy is `none` (docs/memory.md, Budgets).
   */
  CONTEXT_TOO_LARGE: 422,
  /** An agent's final output failed its output_schema (on_failure: reject, or a repair that failed too). */
  GUARDRAIL_FAILED: 422,
  // 429 — a tenant's quota (docs/operations.md, Quotas)
  /** Over one of the tenant's limits: details name it, its value, its window and `retry_after_s`. */
  QUOTA_EXCEEDED: 429,
  // 5xx
  INTERNAL: 500,
  /** A run a restart interrupted more often than it may be resumed. */
  RUN_INTERRUPTED: 500,
  /** An agent's turn failed upstream: the model provider or the agent's webhook. */
  MODEL_ERROR: 502,
  WEBHOOK_ERROR: 502,
  WEBHOOK_INVALID_REPLY: 502,
  /** A remote A2A agent's card could not be read or is not a usable card (not JSON, too large, no JSON-RPC interface). */
  REMOTE_AGENT_CARD_INVALID: 502,
  /** A remote A2A agent answered with an error, an unusable reply, or a failed, rejected or cancelled task. */
  REMOTE_AGENT_ERROR: 502,
  /** An MCP tool server could not list its tools (unreachable, an error status, a JSON-RPC error). */
  MCP_ERROR: 502,
  MODEL_TIMEOUT: 504,
  WEBHOOK_TIMEOUT: 504,
  /** A remote A2A agent did not answer within the agent's timeout_s. */
  REMOTE_AGENT_TIMEOUT: 504,
  /** Nobody sent the input a remote agent asked for in time. */
  INPUT_TIMEOUT: 504,
  /** Nobody answered a human agent's inbox item in time. */
  HUMAN_TIMEOUT: 504,
  /** The client did not post a paused run's tool outputs in time. */
  TOOL_OUTPUTS_TIMEOUT: 504,
  AUTH_NOT_CONFIGURED: 503,
  /**
   * The vault cannot seal or open: RELAY_VAULT_KEY is unset or not a usable key, or a secret was
   * sealed under a key it no longer holds (docs/operations.md, Rotating the vault key).
   */
  VAULT_UNAVAILABLE: 503,
  DEPENDENCY_UNAVAILABLE: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export function statusOf(code: ErrorCode): number {
  return ERROR_STATUS[code];
}
