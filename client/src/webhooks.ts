import {
  DEFAULT_TOLERANCE_SECONDS,
  type HeaderSource,
  type WebhookRefusal as SignatureRefusal,
  secretList,
  verifyWebhook as verifySignature,
} from "../../src/lib/standard-webhooks.ts";
import type { AuditRecord } from "./types.ts";

export type { HeaderSource };

/**
 * Verifies what Relay sends out — event notifications, webhook agents' turns, http tools'
 * calls — as Standard Webhooks v1: HMAC-SHA256 over `${webhook-id}.${webhook-timestamp}.${body}`,
 * `webhook-signature: v1,<base64>` (space-separated when several secrets sign), secrets
 * `whsec_<base64>` (docs/webhooks.md). The checks are the very ones Relay runs on the webhooks
 * it receives (src/lib/standard-webhooks.ts, imported from the repository rather than copied);
 * this adds the client's shape: a thrown error, the parsed payload, and the signed address.
 */

/** The reference library's tolerance either side of now, in seconds. */
export const DEFAULT_TOLERANCE_S = DEFAULT_TOLERANCE_SECONDS;

/**
 * Why a delivery was refused: headers missing, a timestamp that is not Unix seconds, one too
 * old or too far ahead, no signature that matches, a secret that is not `whsec_` + base64, or
 * a signed body naming another tenant or target than the receiver expects.
 */
export type WebhookRefusal = SignatureRefusal | "wrong_tenant" | "wrong_target";

export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
  readonly reason: WebhookRefusal;

  constructor(reason: WebhookRefusal) {
    super(`webhook refused: ${reason.replaceAll("_", " ")}`);
    this.reason = reason;
  }
}

/**
 * Who a delivery is from and for, signed with the rest of it: the sending tenant, and the
 * target (`agent:<name>`, `tool:<name>`, `events`). Docs/security.md, What is signed.
 */
export interface DeliveryAddress {
  tenant: string;
  target: string;
}

/** `PUT /v1/config/events` deliveries: an audit record (docs/webhooks.md, Out). */
export interface EventNotification extends DeliveryAddress {
  type: string;
  timestamp: string;
  data: AuditRecord;
}

/** A webhook agent's turn (docs/runs.md, Webhook agents). */
export interface AgentTurnDelivery extends DeliveryAddress {
  type: "agent.turn";
  timestamp: string;
  data: {
    session_id: string;
    run_id: string;
    agent: string;
    messages: unknown[];
    tools: unknown[];
    context: unknown;
  };
}

/** An http tool's call (docs/runs.md, Tools). */
export interface ToolCallDelivery extends DeliveryAddress {
  type: "tool.call";
  timestamp: string;
  data: { session_id: string; run_id: string; agent: string; tool: string; tool_call_id: string; arguments: unknown };
}

export interface VerifiedWebhook<T> {
  /** `webhook-id`: the same for every retry of one delivery, so drop repeats by it. */
  id: string;
  /** `webhook-timestamp`, Unix seconds. */
  timestamp: number;
  /** The body, parsed. */
  payload: T;
}

export interface VerifyOptions {
  /** Seconds either side of now a timestamp may be (default 300). */
  toleranceS?: number;
  /** Now, in Unix seconds (default the clock). */
  nowS?: number;
  /** The tenant the delivery must name (refused as `wrong_tenant` otherwise). */
  tenant?: string;
  /** The target the delivery must name, `agent:<name>`, `tool:<name>` or `events` (`wrong_target`). */
  target?: string;
}

/**
 * Checks a delivery against `body` exactly as received (read it as text before parsing) and
 * returns its id, timestamp and parsed payload; throws a WebhookVerificationError otherwise.
 * Any of `secrets` may match any of the signatures (rotation). Give `tenant` and `target` to
 * refuse a delivery meant for another tenant or endpoint (one replayed to yours).
 */
export async function verifyWebhook<T = EventNotification | AgentTurnDelivery | ToolCallDelivery>(
  secrets: string | readonly string[],
  headers: HeaderSource,
  body: string,
  options: VerifyOptions = {},
): Promise<VerifiedWebhook<T>> {
  const list = typeof secrets === "string" ? [secrets] : secrets;
  const now = options.nowS ?? Math.floor(Date.now() / 1000);
  const verified = await verifySignature(list.flatMap(secretList), headers, body, now, options.toleranceS);
  if (!verified.ok) throw new WebhookVerificationError(verified.reason);
  const { id, timestamp } = verified;
  const payload = JSON.parse(body) as T;
  // A valid signature proves who sent it; the signed tenant and target say whom it was for.
  const address = (payload ?? {}) as Partial<DeliveryAddress>;
  if (options.tenant !== undefined && address.tenant !== options.tenant)
    throw new WebhookVerificationError("wrong_tenant");
  if (options.target !== undefined && address.target !== options.target)
    throw new WebhookVerificationError("wrong_target");
  return { id, timestamp, payload };
}
