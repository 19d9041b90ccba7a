import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DevServer, devKey, startDevServer } from "../../bench/lib/wrangler-dev";

/**
 * The interop suite's world, on loopback (ports 8880–8889): Relay under `wrangler dev`
 * (fresh local state, the dev tenants, local endpoints allowed as .dev.vars.example sets)
 * with its OpenAI-compatible provider pointed at a scripted model in this process, and
 * small HTTP servers for the outside world the official SDKs serve.
 */

export const PORTS = { relay: 8880, model: 8881, remote: 8882, mcp: 8883, bad: 8884 } as const;
export const loopback = (port: number) => `http://127.0.0.1:${port}`;

/** One scripted model reply: text (streamed in pieces when asked to stream) or tool calls. */
export type ModelReply =
  | { content: string; delayMs?: number }
  | { calls: { name: string; arguments: Record<string, unknown> }[] };

interface WireRequest {
  messages: { role: string; content: string | null }[];
  tools?: { function: { name: string } }[];
  stream?: boolean;
}

/** The scripted model: per agent (its system prompt says "You are '<name>'"), replies in order. */
export class FakeModel {
  readonly scripts = new Map<string, ModelReply[]>();
  readonly requests: { agent: string; tools: string[]; last: string }[] = [];
  private server: Server | null = null;
  private calls = 0;

  script(agent: string, ...replies: ModelReply[]): void {
    this.scripts.set(agent, [...(this.scripts.get(agent) ?? []), ...replies]);
  }

  async start(port: number): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(port, "127.0.0.1", resolve));
  }

  stop(): void {
    this.server?.close();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let text = "";
    for await (const chunk of req) text += chunk;
    const body = JSON.parse(text) as WireRequest;
    const agent = /^You are '([^']+)'/.exec(body.messages[0]?.content ?? "")?.[1] ?? "?";
    const last = [...body.messages].reverse().find((m) => m.role === "user" || m.role === "tool")?.content ?? "";
    this.requests.push({ agent, tools: (body.tools ?? []).map((t) => t.function.name), last });
    const reply = this.scripts.get(agent)?.shift() ?? { content: `(${agent} has nothing scripted)` };
    const id = `chatcmpl-${++this.calls}`;
    const created = Math.floor(Date.now() / 1000);
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    if ("delayMs" in reply && reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    const toolCalls =
      "calls" in reply
        ? reply.calls.map((c, i) => ({
            id: `call_${this.calls}_${i}`,
            type: "function",
            function: { name: c.name, arguments: JSON.stringify(c.arguments) },
          }))
        : undefined;
    if (!body.stream || toolCalls) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id,
          object: "chat.completion",
          created,
          model: "fake",
          choices: [
            {
              index: 0,
              message: {
                role: "assistant",
                content: toolCalls ? null : (reply as { content: string }).content,
                tool_calls: toolCalls,
              },
              finish_reason: toolCalls ? "tool_calls" : "stop",
            },
          ],
          usage,
        }),
      );
      return;
    }
    // A text answer streamed as OpenAI does: chat.completion.chunk events, usage last, then [DONE].
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: "fake", choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
    const words = (reply as { content: string }).content.split(/(?<= )/);
    res.write(chunk({ role: "assistant", content: "" }, null));
    for (const word of words) {
      res.write(chunk({ content: word }, null));
      await new Promise((r) => setTimeout(r, 5));
    }
    res.write(chunk({}, "stop"));
    res.write(
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: "fake", choices: [], usage })}\n\n`,
    );
    res.end("data: [DONE]\n\n");
  }
}

export interface Relay {
  url: string;
  key: string;
  dev: DevServer;
  /** A call of Relay's own API with the dev tenant's key. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  stop(): Promise<void>;
}

/** Relay under wrangler dev, its model the fake on PORTS.model, the dev tenant's model provider set to it. */
export async function startRelay(vars: Record<string, string> = {}): Promise<Relay> {
  const state = mkdtempSync(join(tmpdir(), "relay-interop-"));
  const dev = await startDevServer(PORTS.relay, state, {
    OPENAI_BASE_URL: `${loopback(PORTS.model)}/v1`,
    OPENAI_API_KEY: "sk-interop",
    ...vars,
  });
  const key = devKey();
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${dev.url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  };
  const routing = await api("PUT", "/v1/config/routing", { llm: { provider: "openai", model: "fake" } });
  if (routing.status !== 200) throw new Error(`routing config: ${JSON.stringify(routing.json)}`);
  return {
    url: dev.url,
    key,
    dev,
    api,
    stop: async () => {
      await dev.stop();
      rmSync(state, { recursive: true, force: true });
    },
  };
}

/** Puts agents (JSON definitions) into the dev tenant's registry. */
export async function putAgents(relay: Relay, agents: Record<string, unknown>[]): Promise<void> {
  for (const agent of agents) {
    const res = await relay.api("PUT", `/v1/agents/${agent.name as string}`, agent);
    if (res.status >= 300) throw new Error(`PUT agent ${agent.name as string}: ${JSON.stringify(res.json)}`);
  }
}

/** Waits until `check` holds (a run reaching a state Relay reports), polling; fails after `ms`. */
export async function until<T>(
  what: string,
  read: () => Promise<T>,
  check: (value: T) => boolean,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
