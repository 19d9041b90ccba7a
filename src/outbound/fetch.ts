import type { ErrorCode } from "../errors/codes";
import { readCapped } from "../lib/read-capped";
import { isWebhookSecret, webhookHeaders } from "../lib/standard-webhooks";
import { excerpt } from "../providers/failures";
import { traceHeaders } from "../telemetry/propagation";
import type { TraceContext } from "../telemetry/trace-context";
import { checkOutboundUrl, type OutboundPolicy, type OutboundRule, refusalMessage } from "./policy";

/**
 * The one way Relay calls an address a tenant named: the policy is checked first (a refused
 * URL is never fetched), redirects are never followed, and what comes back of a failure is a
 * short excerpt only. Callers: the webhook agent and http tool executors, event deliveries.
 */

/** How much of a failed call's body its error quotes: enough to debug one's own endpoint. */
export const ERROR_EXCERPT_CHARS = 200;
/** How much of a failed call's body is read for that excerpt. */
const ERROR_READ_BYTES = 1024;

/** Why what a call needs could not be had (a secret missing from the vault, D1 down): a coded message. */
export interface OutboundProblem {
  ok: false;
  code: ErrorCode;
  message: string;
}

/** How one delivery is signed: its secrets, current first (none: unsigned), and what they are, for messages. */
export type DeliverySigning = { ok: true; secrets: readonly string[]; by: string } | OutboundProblem;

/** Headers a definition sends, their values read from the tenant's vault. */
export type SecretHeaderValues = { ok: true; values: Readonly<Record<string, string>> } | OutboundProblem;

/**
 * What a caller resolves before an outbound call: the tenant it acts for (a signed delivery
 * names it), the policy in force, the delivery's signing and the headers it sends.
 */
export interface OutboundCall {
  tenant: string;
  policy: OutboundPolicy;
  signing: DeliverySigning;
  headers: SecretHeaderValues;
  /** The run's trace, as the span the call belongs to sends it (docs/observability.md, Propagation); none outside a run. */
  trace?: TraceContext;
}

/**
 * The target a signed delivery names beside the tenant that sent it (`agent:<name>`,
 * `tool:<name>`, `events`). Both are inside the signed body, so a delivery replayed to
 * another tenant's or another agent's endpoint says so (docs/security.md, What is signed).
 */
export const deliveryTarget = {
  agent: (name: string) => `agent:${name}`,
  tool: (name: string) => `tool:${name}`,
  events: "events",
} as const;

export type OutboundResult =
  | { kind: "refused"; rule: OutboundRule; message: string }
  | { kind: "failed"; message: string }
  | { kind: "response"; response: Response };

/**
 * Fetches `url` if the policy allows it, with `redirect: "manual"` whatever `init` says.
 * With a trace, the request carries its `traceparent` and `tracestate` (see {@link withTrace}).
 * Never throws: a refusal, a transport failure (message shortened) or the response.
 */
export async function outboundFetch(
  url: string,
  init: RequestInit,
  policy: OutboundPolicy,
  trace?: TraceContext,
): Promise<OutboundResult> {
  const verdict = checkOutboundUrl(url, policy);
  if (!verdict.ok) return { kind: "refused", rule: verdict.rule, message: refusalMessage(verdict) };
  const sent = trace ? { ...init, headers: withTrace(init.headers, trace) } : init;
  try {
    // Redirects are not followed: a POST turned into a GET elsewhere is never what was meant,
    // and a redirect would lead around the policy.
    return { kind: "response", response: await fetch(verdict.url, { ...sent, redirect: "manual" }) };
  } catch (error) {
    return { kind: "failed", message: excerpt(error instanceof Error ? error.message : String(error)) };
  }
}

/**
 * `headers` with the trace's `traceparent` and `tracestate` set over any of the same name: a
 * header a tenant configured under either name never replaces Relay's, and a `tracestate` of
 * theirs is not sent beside a trace it does not belong to (docs/security.md).
 */
export function withTrace(headers: HeadersInit | undefined, trace: TraceContext): Headers {
  const out = new Headers(headers);
  out.delete("tracestate");
  for (const [name, value] of Object.entries(traceHeaders(trace))) out.set(name, value);
  return out;
}

/** A short excerpt of a failed call's body ("" when empty or unreadable); the rest is never read. */
export async function errorExcerpt(response: Response): Promise<string> {
  const read = await readCapped(response, ERROR_READ_BYTES, "truncate");
  return read.ok ? excerpt(read.text, ERROR_EXCERPT_CHARS) : "";
}

/** True when one of the secrets is not a Standard Webhooks secret (`whsec_` + base64). */
export function unusableSecret(signing: { secrets: readonly string[] }): boolean {
  return signing.secrets.some((secret) => !isWebhookSecret(secret));
}

/** The Standard Webhooks headers of a delivery: id and timestamp always, signatures when there are secrets. */
export async function deliveryHeaders(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Promise<Record<string, string>> {
  if (secrets.length === 0) return { "webhook-id": id, "webhook-timestamp": String(timestampSeconds) };
  return { ...(await webhookHeaders(secrets, id, timestampSeconds, body)) };
}
