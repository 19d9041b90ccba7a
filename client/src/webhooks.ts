import type { AuditRecord } from "./types.ts";

/**
 * Verifies what Relay sends out — event notifications, webhook agents' turns, http tools'
 * calls — as Standard Webhooks v1: HMAC-SHA256 over `${webhook-id}.${webhook-timestamp}.${body}`,
 * `webhook-signature: v1,<base64>` (space-separated when several secrets sign), secrets
 * `whsec_<base64>` (docs/webhooks.md). WebCrypto only, so it runs in Node, Workers and browsers.
 */

/** The reference library's tolerance either side of now, in seconds. */
export const DEFAULT_TOLERANCE_S = 5 * 60;

/**
 * Why a delivery was refused: headers missing, a timestamp that is not Unix seconds, one too
 * old or too far ahead, no signature that matches, a secret that is not `whsec_` + base64, or
 * a signed body naming another tenant or target than the receiver expects.
 */
export type WebhookRefusal =
  | "missing_headers"
  | "invalid_timestamp"
  | "stale"
  | "future"
  | "bad_signature"
  | "invalid_secret"
  | "wrong_tenant"
  | "wrong_target";

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

/** Request headers as a `Headers` object, or a plain record such as Node's `IncomingMessage.headers`. */
export type HeaderSource = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

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

const PREFIX = "whsec_";
const encoder = new TextEncoder();

function header(headers: HeaderSource, name: string): string | null {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name);
  for (const [key, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    return typeof value === "string" ? value : value.join(" ");
  }
  return null;
}

function fromBase64(text: string): Uint8Array | null {
  try {
    const binary = atob(text);
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/** Equal bytes, compared in time that depends only on the length. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** Secrets as given: one, several, or Relay's comma-separated rotation list. */
function secretList(secrets: string | readonly string[]): string[] {
  return (typeof secrets === "string" ? [secrets] : [...secrets])
    .flatMap((s) => s.split(","))
    .map((s) => s.trim())
    .filter((s) => s !== "");
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
  const id = header(headers, "webhook-id");
  const timestampText = header(headers, "webhook-timestamp")?.trim();
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestampText || !signatures) throw new WebhookVerificationError("missing_headers");
  if (!/^\d{1,15}$/.test(timestampText)) throw new WebhookVerificationError("invalid_timestamp");
  const timestamp = Number(timestampText);
  const now = options.nowS ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceS ?? DEFAULT_TOLERANCE_S;
  if (now - timestamp > tolerance) throw new WebhookVerificationError("stale");
  if (timestamp - now > tolerance) throw new WebhookVerificationError("future");

  const keys = secretList(secrets).map((s) => fromBase64(s.startsWith(PREFIX) ? s.slice(PREFIX.length) : s));
  if (keys.length === 0 || keys.some((key) => key === null || key.length === 0))
    throw new WebhookVerificationError("invalid_secret");
  const offered = signatures
    .split(" ")
    .map((entry) => entry.split(","))
    .filter(([version]) => version === "v1")
    .map(([, signature]) => fromBase64(signature ?? ""))
    .filter((signature): signature is Uint8Array => signature !== null);
  const signed = encoder.encode(`${id}.${timestamp}.${body}`);
  let matched = false;
  for (const key of keys as Uint8Array[]) {
    const hmac = await crypto.subtle.importKey("raw", key as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
    ]);
    const expected = new Uint8Array(await crypto.subtle.sign("HMAC", hmac, signed));
    // Every candidate is compared, so the time taken does not tell which one matched.
    for (const signature of offered) matched = sameBytes(signature, expected) || matched;
  }
  if (!matched) throw new WebhookVerificationError("bad_signature");
  const payload = JSON.parse(body) as T;
  // A valid signature proves who sent it; the signed tenant and target say whom it was for.
  const address = (payload ?? {}) as Partial<DeliveryAddress>;
  if (options.tenant !== undefined && address.tenant !== options.tenant)
    throw new WebhookVerificationError("wrong_tenant");
  if (options.target !== undefined && address.target !== options.target)
    throw new WebhookVerificationError("wrong_target");
  return { id, timestamp, payload };
}
