import { deadline } from "../lib/deadline";
import { webhookHeaders } from "../lib/standard-webhooks";
import { deliveryTarget, outboundFetch } from "../outbound/fetch";
import type { OutboundPolicy } from "../outbound/policy";
import type { TraceContext } from "../telemetry/trace-context";
import type { AuditRecord } from "./record";

/**
 * One outbound lifecycle notification (webhooks out, docs/webhooks.md): a Standard Webhooks
 * delivery of an audit record to the tenant's events_url. `webhook-id` is the record's id,
 * the same on every retry, so a receiver drops repeats; the body is
 * `{ "type": "<action>", "timestamp", "tenant", "target": "events", "data": { id, at, session_id, handoff_id, agent, actor, actor_type, details } }`
 * (`tenant` and `target` signed with the rest: docs/security.md, What is signed).
 */

/** A receiver gets this long to answer; a slower one counts as a failed attempt. */
export const DELIVERY_TIMEOUT_MS = 10_000;

export function deliveryBody(record: AuditRecord): string {
  const { tenant, action, ...data } = record;
  return JSON.stringify({ type: action, timestamp: record.at, tenant, target: deliveryTarget.events, data });
}

export type DeliveryOutcome = { ok: true; status: number } | { ok: false; error: string };

/** How one delivery is sent besides its content. */
export interface DeliveryOptions {
  /**
   * The trace of the run whose record it is (docs/observability.md, Propagation): sent as
   * `traceparent` and `tracestate`, beside the signed content, never in it. None for a record
   * no run wrote.
   */
  trace?: TraceContext | undefined;
  nowMs?: number;
}

/**
 * Signed at wall-clock time (what a receiver checks the 5-minute window against). A URL the
 * outbound policy refuses (set before the policy, or since refused by a changed deployment)
 * is not called: the attempt fails with ENDPOINT_NOT_ALLOWED and is retried like any other
 * failure, so a corrected events URL still gets it.
 */
export async function deliver(
  url: string,
  secret: string,
  id: string,
  body: string,
  policy: OutboundPolicy,
  { trace, nowMs = Date.now() }: DeliveryOptions = {},
): Promise<DeliveryOutcome> {
  const timestamp = Math.floor(nowMs / 1000);
  const headers = {
    "content-type": "application/json",
    "user-agent": "Relay",
    ...(await webhookHeaders([secret], id, timestamp, body)),
  };
  const { signal, clear } = deadline(DELIVERY_TIMEOUT_MS);
  try {
    const result = await outboundFetch(url, { method: "POST", headers, body, signal }, policy, trace);
    if (result.kind === "refused")
      return { ok: false, error: `ENDPOINT_NOT_ALLOWED (${result.rule}): ${result.message}` };
    if (result.kind === "failed")
      return { ok: false, error: signal.aborted ? `no answer within ${DELIVERY_TIMEOUT_MS} ms` : result.message };
    const { response } = result;
    await response.body?.cancel().catch(() => undefined);
    return response.status >= 200 && response.status < 300
      ? { ok: true, status: response.status }
      : { ok: false, error: `HTTP ${response.status}` };
  } finally {
    clear();
  }
}
