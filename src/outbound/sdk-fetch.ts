import type { TraceContext } from "../telemetry/trace-context";
import { outboundFetch } from "./fetch";
import type { OutboundPolicy, OutboundRule } from "./policy";

/**
 * A `fetch` for the protocol SDKs Relay drives (the A2A client, the MCP client): every
 * request they make goes through {@link outboundFetch} — the address policy first, redirects
 * never followed — and every body they read is capped, so a remote that streams without end
 * cannot fill a Durable Object's memory. Failures are thrown as {@link OutboundError}s, which
 * the SDKs pass up as the cause of their own errors.
 */

/** Why a guarded request did not get a usable response. */
export type OutboundFailure = "refused" | "unreachable" | "oversize";

export class OutboundError extends Error {
  override readonly name = "OutboundError";
  constructor(
    readonly failure: OutboundFailure,
    message: string,
    readonly rule?: OutboundRule,
  ) {
    super(message);
  }
}

export interface SdkFetchOptions {
  policy: OutboundPolicy;
  /** The most bytes one response body may have; past it, reading fails with an oversize OutboundError. */
  maxBodyBytes: number;
  /** Headers added to every request (the SDK's own win for the protocol's headers). */
  headers?: Record<string, string>;
  /** Called with each request's final body and headers before it is sent (e.g. to sign it). */
  sign?: (body: string, headers: Headers) => Promise<void>;
  /** The run's trace: every request carries its `traceparent` and `tracestate`, over any the SDK or tenant set. */
  trace?: TraceContext;
}

/** The first OutboundError in an error's cause chain (SDKs wrap what fetch threw). */
export function outboundCause(error: unknown): OutboundError | null {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    if (e instanceof OutboundError) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

/** A fetch-compatible function that sends only through the outbound policy, with capped bodies. */
export function sdkFetch(options: SdkFetchOptions): typeof fetch {
  const guarded = async (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
    const url = input instanceof Request ? input.url : String(input);
    const headers = new Headers(options.headers);
    for (const [name, value] of new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined)))
      headers.set(name, value);
    headers.set("user-agent", "Relay");
    const body = typeof init.body === "string" ? init.body : undefined;
    if (options.sign && body !== undefined) await options.sign(body, headers);
    const result = await outboundFetch(url, { ...init, headers }, options.policy, options.trace);
    if (result.kind === "refused") throw new OutboundError("refused", result.message, result.rule);
    if (result.kind === "failed") throw new OutboundError("unreachable", result.message);
    return capped(result.response, options.maxBodyBytes);
  };
  return guarded as typeof fetch;
}

/** The response with a body that errors once more than `max` bytes have come. */
function capped(response: Response, max: number): Response {
  if (!response.body) return response;
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > max) {
    void response.body.cancel().catch(() => undefined);
    throw new OutboundError("oversize", `the reply is larger than ${max} bytes`);
  }
  let seen = 0;
  const limit = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > max) controller.error(new OutboundError("oversize", `the reply is larger than ${max} bytes`));
      else controller.enqueue(chunk);
    },
  });
  return new Response(response.body.pipeThrough(limit), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
