/**
 * The http tool executor: a registry tool of kind `http` is run by POSTing the call to the
 * tool's URL as a Standard Webhooks delivery; the reply becomes the call's output. Every
 * outcome is an output the model sees (a failure too: the model can tell the user or try
 * otherwise), never a throw.
 *
 * The delivery body (JSON, UTF-8):
 *   { "type": "tool.call", "timestamp": "<ISO 8601>",
 *     "data": { "session_id", "run_id", "agent", "tool", "tool_call_id", "arguments" } }
 * The reply: any 2xx body, as text (JSON or not), at most the tool's `max_response_bytes`.
 * The delivery's `webhook-id` is the tool call id, so a receiver can de-duplicate.
 */
import { deadline } from "../lib/deadline";
import { readCapped } from "../lib/read-capped";
import { isWebhookSecret, webhookHeaders } from "../lib/standard-webhooks";
import { excerpt } from "../providers/failures";
import type { PendingCall } from "../schemas/run";
import type { ToolDefinition } from "../schemas/tool";
import { secretList } from "./webhook-agent";

const ERROR_EXCERPT_BYTES = 4 * 1024;

export interface HttpToolCall {
  session_id: string;
  run_id: string;
  agent: string;
  call: PendingCall;
}

export interface HttpToolResult {
  ok: boolean;
  /** What the model sees: the reply, or "Error: …". */
  output: string;
  /** HTTP status when one came back. */
  status: number | null;
  duration_ms: number;
}

/**
 * The Worker secret holding a tool's signing secret: `TOOL_SECRET_` + the name upper-cased,
 * every character other than A–Z and 0–9 as `_` (`crm-lookup` → `TOOL_SECRET_CRM_LOOKUP`).
 */
export function toolSecretName(tool: string): string {
  return `TOOL_SECRET_${tool.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

export function toolSecret(env: Record<string, unknown>, tool: string): string | undefined {
  const value = env[toolSecretName(tool)];
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/** Calls the tool within its deadline (`timeout_s`), its reply capped at `max_response_bytes`. */
export async function callHttpTool(
  tool: ToolDefinition,
  input: HttpToolCall,
  options: { secret: string | undefined; now?: () => number },
): Promise<HttpToolResult> {
  const now = options.now ?? Date.now;
  const started = now();
  const done = (ok: boolean, output: string, status: number | null = null): HttpToolResult => ({
    ok,
    output,
    status,
    duration_ms: Math.max(0, now() - started),
  });
  const secrets = secretList(options.secret);
  if (secrets.some((s) => !isWebhookSecret(s)))
    return done(
      false,
      `Error: '${tool.name}' could not be called: ${toolSecretName(tool.name)} is not a Standard Webhooks secret.`,
    );

  const timeoutMs = tool.timeout_s * 1000;
  const { signal, clear } = deadline(timeoutMs);
  const timedOut = new Promise<HttpToolResult>((resolve) => {
    const onAbort = () => resolve(done(false, `Error: '${tool.name}' did not answer within ${tool.timeout_s} s.`));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  const exchange = async (): Promise<HttpToolResult> => {
    let args: unknown;
    try {
      args = JSON.parse(input.call.arguments || "{}");
    } catch {
      args = {};
    }
    const body = JSON.stringify({
      type: "tool.call",
      timestamp: new Date(started).toISOString(),
      data: {
        session_id: input.session_id,
        run_id: input.run_id,
        agent: input.agent,
        tool: tool.name,
        tool_call_id: input.call.id,
        arguments: args,
      },
    });
    const timestamp = Math.floor(started / 1000);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/plain;q=0.9, */*;q=0.5",
      "user-agent": "Relay",
      "webhook-id": input.call.id,
      "webhook-timestamp": String(timestamp),
    };
    if (secrets.length > 0) Object.assign(headers, await webhookHeaders(secrets, input.call.id, timestamp, body));
    let response: Response;
    try {
      response = await fetch(tool.url!, { method: "POST", headers, body, signal, redirect: "manual" });
    } catch (error) {
      return done(
        false,
        `Error: '${tool.name}' could not be reached: ${excerpt(error instanceof Error ? error.message : String(error))}`,
      );
    }
    if (response.status < 200 || response.status > 299) {
      const text = await readCapped(response, ERROR_EXCERPT_BYTES, "truncate");
      const detail = text.ok && text.text.trim() !== "" ? `: ${excerpt(text.text)}` : "";
      return done(false, `Error: '${tool.name}' failed with HTTP ${response.status}${detail}`, response.status);
    }
    const declared = Number(response.headers.get("content-length"));
    const tooLarge = `Error: the reply of '${tool.name}' is larger than ${tool.max_response_bytes} bytes; it was not read.`;
    if (Number.isFinite(declared) && declared > tool.max_response_bytes) {
      await response.body?.cancel().catch(() => undefined);
      return done(false, tooLarge, response.status);
    }
    const read = await readCapped(response, tool.max_response_bytes, "refuse");
    if (!read.ok) {
      const why =
        read.reason === "oversize"
          ? tooLarge
          : read.reason === "encoding"
            ? `Error: the reply of '${tool.name}' is not UTF-8 text.`
            : `Error: the reply of '${tool.name}' could not be read: ${read.message}`;
      return done(false, why, response.status);
    }
    return done(true, read.text, response.status);
  };
  return Promise.race([exchange(), timedOut]).finally(clear);
}
