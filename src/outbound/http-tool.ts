/**
 * The http tool executor: a registry tool of kind `http` is run by POSTing the call to the
 * tool's URL as a Standard Webhooks delivery; the reply becomes the call's output. Every
 * outcome is an output the model sees (a failure too: the model can tell the user or try
 * otherwise), never a throw.
 *
 * The delivery body (JSON, UTF-8):
 *   { "type": "tool.call", "timestamp": "<ISO 8601>", "tenant", "target": "tool:<name>",
 *     "data": { "session_id", "run_id", "agent", "tool", "tool_call_id", "arguments" } }
 * `tenant` and `target` are signed with the rest (docs/security.md, What is signed).
 * The reply: any 2xx body, as text (JSON or not), at most the tool's `max_response_bytes`.
 * The delivery's `webhook-id` is the tool call id, so a receiver can de-duplicate.
 */
import { deadline } from "../lib/deadline";
import { readCapped } from "../lib/read-capped";
import type { PendingCall } from "../schemas/run";
import type { ToolDefinition } from "../schemas/tool";
import {
  deliveryHeaders,
  deliveryTarget,
  errorExcerpt,
  type OutboundCall,
  outboundFetch,
  unusableSecret,
} from "./fetch";
import { secretRedactor } from "./redact";

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
 * Calls the tool within its deadline (`timeout_s`), its reply capped at `max_response_bytes`.
 * `options.outbound`: the tenant, the address policy in force, the delivery's signing (the
 * caller resolves the tool's vault `signing_secret`, else the tenant's signing secret, none
 * for `signing: none`) and the headers it sends.
 * A URL the policy refuses is never called: the output says why.
 */
export async function callHttpTool(
  tool: ToolDefinition,
  input: HttpToolCall,
  options: { outbound: OutboundCall; now?: () => number },
): Promise<HttpToolResult> {
  const now = options.now ?? Date.now;
  const started = now();
  const { signing, policy, headers: sent } = options.outbound;
  // The reply goes to the model and the run's history: never a header value it echoes.
  const redact = secretRedactor(sent.ok ? Object.values(sent.values) : []);
  const done = (ok: boolean, output: string, status: number | null = null): HttpToolResult => ({
    ok,
    output: redact(output),
    status,
    duration_ms: Math.max(0, now() - started),
  });
  if (!signing.ok)
    return done(false, `Error: '${tool.name}' could not be called (${signing.code}): ${signing.message}.`);
  if (!sent.ok) return done(false, `Error: '${tool.name}' could not be called (${sent.code}): ${sent.message}.`);
  if (unusableSecret(signing))
    return done(false, `Error: '${tool.name}' could not be called: ${signing.by} is not a Standard Webhooks secret.`);

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
      tenant: options.outbound.tenant,
      target: deliveryTarget.tool(tool.name),
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
      ...sent.values,
      "content-type": "application/json",
      accept: "application/json, text/plain;q=0.9, */*;q=0.5",
      "user-agent": "Relay",
      ...(await deliveryHeaders(signing.secrets, input.call.id, timestamp, body)),
    };
    const result = await outboundFetch(
      tool.url ?? "",
      { method: "POST", headers, body, signal },
      policy,
      options.outbound.trace,
    );
    if (result.kind === "refused")
      return done(
        false,
        `Error: '${tool.name}' was not called: its url is not allowed (${result.rule}): ${result.message}`,
      );
    if (result.kind === "failed") return done(false, `Error: '${tool.name}' could not be reached: ${result.message}`);
    const { response } = result;
    if (response.status < 200 || response.status > 299) {
      const text = await errorExcerpt(response);
      const detail = text !== "" ? `: ${text}` : "";
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
