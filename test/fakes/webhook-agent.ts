import { delay, type HttpHandler, HttpResponse, http, type JsonBodyType } from "msw";
import { Webhook } from "standardwebhooks";

/**
 * A fake webhook agent for msw: the user's endpoint behind a `kind: webhook` agent. Like a
 * careful real receiver it verifies every delivery's Standard Webhooks signature with the
 * reference `standardwebhooks` package (answering 401 when it fails), then answers what the
 * test asks for. Every delivery is recorded. Install it with `llmServer.use(fake.handler)`.
 */

/** One delivery as the fake received it. */
export interface WebhookDelivery {
  url: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The body exactly as sent (what the signature covers). */
  text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  body: unknown;
  /** What the reference package said: true or false with a secret configured, null without one. */
  verified: boolean | null;
  /** The package's refusal message when `verified` is false. */
  verifyError: string | null;
}

/** What the fake answers. */
export type WebhookReply =
  | { kind: "json"; body: unknown; status: number }
  | { kind: "text"; text: string; status: number; headers?: Record<string, string> }
  | { kind: "bytes"; bytes: Uint8Array; status: number }
  | { kind: "endless"; chunkBytes: number }
  | { kind: "stall" }
  | { kind: "network-error" }
  | { kind: "delay"; ms: number; reply: WebhookReply };

/** A 2xx JSON reply (any body: the right shape or not). */
export const replyJson = (body: unknown, status = 200): WebhookReply => ({ kind: "json", body, status });
/** `{ output }`. */
export const replyOutput = (output: string): WebhookReply => replyJson({ output });
/** `{ tool_calls }` (plus `output` when given). */
export const replyToolCalls = (tool_calls: unknown[], output?: string): WebhookReply =>
  replyJson(output === undefined ? { tool_calls } : { output, tool_calls });
/** A raw text body (not JSON, empty, …) with `status`. */
export const replyText = (text: string, status = 200, headers?: Record<string, string>): WebhookReply =>
  headers === undefined ? { kind: "text", text, status } : { kind: "text", text, status, headers };
/** Raw bytes (e.g. not UTF-8). */
export const replyBytes = (bytes: Uint8Array, status = 200): WebhookReply => ({ kind: "bytes", bytes, status });
/** A 200 whose body streams `chunkBytes` of JSON-ish text forever, with no content-length. */
export const replyEndless = (chunkBytes = 64 * 1024): WebhookReply => ({ kind: "endless", chunkBytes });
/** A 200 whose headers arrive but whose body never does. */
export const replyStall = (): WebhookReply => ({ kind: "stall" });
/** A connection that fails (refused, reset). */
export const networkError = (): WebhookReply => ({ kind: "network-error" });
/** `reply`, after `ms` milliseconds. */
export const delayed = (ms: number, reply: WebhookReply): WebhookReply => ({ kind: "delay", ms, reply });

export interface FakeWebhookAgentOptions {
  /** The endpoint to answer at (POST). */
  url: string;
  /** The secret the receiver holds (`whsec_…`); absent: deliveries are not verified. */
  secret?: string;
  /** Decides the answer from the delivery; default `{ output: "ok" }`. */
  respond?: (delivery: WebhookDelivery) => WebhookReply | Promise<WebhookReply>;
}

export interface FakeWebhookAgent {
  handler: HttpHandler;
  deliveries: WebhookDelivery[];
  /** Bytes an `endless` reply has produced so far (what the client pulled). */
  streamedBytes(): number;
}

/** A fresh `whsec_` secret of 32 random bytes. */
export function newWebhookSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

/** A fake webhook agent at `options.url`. */
export function fakeWebhookAgent(options: FakeWebhookAgentOptions): FakeWebhookAgent {
  const deliveries: WebhookDelivery[] = [];
  let streamed = 0;
  const respond = options.respond ?? (() => replyOutput("ok"));

  const toResponse = async (reply: WebhookReply): Promise<Response> => {
    switch (reply.kind) {
      case "delay":
        await delay(reply.ms);
        return toResponse(reply.reply);
      case "json":
        return HttpResponse.json(reply.body as JsonBodyType, { status: reply.status });
      case "text":
        return new HttpResponse(reply.text, {
          status: reply.status,
          headers: reply.headers ?? { "content-type": "application/json" },
        });
      case "bytes":
        return new HttpResponse(reply.bytes, { status: reply.status, headers: { "content-type": "application/json" } });
      case "network-error":
        return HttpResponse.error();
      case "stall":
        return new HttpResponse(new ReadableStream({ pull: () => new Promise<void>(() => undefined) }), {
          status: 200,
        });
      case "endless": {
        const chunk = new TextEncoder().encode("x".repeat(reply.chunkBytes));
        const stream = new ReadableStream<Uint8Array>({
          start: (controller) => controller.enqueue(new TextEncoder().encode('{"output":"')),
          pull: (controller) => {
            streamed += chunk.byteLength;
            controller.enqueue(chunk);
          },
        });
        return new HttpResponse(stream, { status: 200, headers: { "content-type": "application/json" } });
      }
    }
  };

  const handler = http.post(options.url, async ({ request }) => {
    const text = await request.text();
    const headers = Object.fromEntries(request.headers);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const delivery: WebhookDelivery = { url: request.url, headers, text, body, verified: null, verifyError: null };
    if (options.secret !== undefined) {
      try {
        new Webhook(options.secret).verify(text, headers);
        delivery.verified = true;
      } catch (error) {
        delivery.verified = false;
        delivery.verifyError = error instanceof Error ? error.message : String(error);
      }
    }
    deliveries.push(delivery);
    if (delivery.verified === false)
      return HttpResponse.json({ error: `signature refused: ${delivery.verifyError}` }, { status: 401 });
    return toResponse(await respond(delivery));
  });

  return { handler, deliveries, streamedBytes: () => streamed };
}
