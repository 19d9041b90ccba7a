import { AgentCard, type Message, type Part, Role, TaskState } from "@a2a-js/sdk";
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  type RequestContext,
  ServerCallContext,
} from "@a2a-js/sdk/server";
import { delay, type HttpHandler, HttpResponse, http } from "msw";

/**
 * A remote A2A 1.0 agent for msw, served by the official SDK (DefaultRequestHandler over its
 * JSON-RPC transport handler, tasks in memory), so what Relay talks to is the real protocol.
 * Each turn is scripted: answer with text (streamed in pieces when the card streams), ask for
 * input, hand off with Relay's data part, fail, or never answer. It records what it got.
 */

export type RemoteStep =
  | { kind: "answer"; text: string }
  | { kind: "ask"; question: string }
  | { kind: "handoff"; to: string; reason: string; text?: string }
  | { kind: "fail"; text: string }
  | { kind: "hang" };

export interface FakeA2a {
  handlers: HttpHandler[];
  /** What each turn got: its text parts, data parts, the task it continued (null: a new one), its context, and headers. */
  received: {
    text: string;
    data: unknown[];
    continued: string | null;
    contextId: string;
    headers: Record<string, string>;
  }[];
  card: AgentCard;
}

const text = (value: string): Part => ({
  content: { $case: "text", value },
  metadata: undefined,
  filename: "",
  mediaType: "",
});
const data = (value: unknown): Part => ({
  content: { $case: "data", value },
  metadata: undefined,
  filename: "",
  mediaType: "",
});

function agentMessage(ctx: RequestContext, parts: Part[]): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId: ctx.contextId,
    taskId: ctx.taskId,
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

export function fakeA2aAgent(
  base: string,
  steps: RemoteStep[],
  options: { streaming?: boolean; card?: (card: AgentCard) => unknown; extensions?: string[] } = {},
): FakeA2a {
  const received: FakeA2a["received"] = [];
  const card = AgentCard.fromJSON({
    name: "Remote Helper",
    description: "A remote agent",
    version: "1.0.0",
    supportedInterfaces: [{ url: `${base}/rpc`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
    capabilities: {
      streaming: options.streaming ?? true,
      extensions: (options.extensions ?? []).map((uri) => ({ uri })),
    },
    defaultInputModes: ["text/plain", "application/json"],
    defaultOutputModes: ["text/plain"],
    skills: [{ id: "help", name: "Help", description: "Helps", tags: ["help"] }],
  });
  let headers: Record<string, string> = {};
  const executor: AgentExecutor = {
    async execute(ctx: RequestContext, bus: ExecutionEventBus) {
      const parts = ctx.userMessage.parts;
      received.push({
        text: parts.flatMap((p) => (p.content?.$case === "text" ? [p.content.value] : [])).join("\n"),
        data: parts.flatMap((p) => (p.content?.$case === "data" ? [p.content.value] : [])),
        continued: ctx.task?.id ?? null,
        contextId: ctx.contextId,
        headers,
      });
      const step = steps.shift() ?? { kind: "answer", text: "no more script" };
      const status = (state: TaskState, message?: Message) =>
        bus.publish(
          AgentEvent.statusUpdate({
            taskId: ctx.taskId,
            contextId: ctx.contextId,
            status: { state, message, timestamp: new Date().toISOString() },
            metadata: undefined,
          }),
        );
      if (!ctx.task)
        bus.publish(
          AgentEvent.task({
            id: ctx.taskId,
            contextId: ctx.contextId,
            status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
            artifacts: [],
            history: [ctx.userMessage],
            metadata: undefined,
          }),
        );
      else bus.publish(AgentEvent.task(ctx.task));
      status(TaskState.TASK_STATE_WORKING);
      const artifact = (parts: Part[], append: boolean, lastChunk: boolean) =>
        bus.publish(
          AgentEvent.artifactUpdate({
            taskId: ctx.taskId,
            contextId: ctx.contextId,
            artifact: {
              artifactId: "answer",
              name: "answer",
              description: "",
              parts,
              metadata: undefined,
              extensions: [],
            },
            append,
            lastChunk,
            metadata: undefined,
          }),
        );
      switch (step.kind) {
        case "hang":
          await new Promise(() => undefined);
          return;
        case "ask":
          status(TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage(ctx, [text(step.question)]));
          break;
        case "fail":
          status(TaskState.TASK_STATE_FAILED, agentMessage(ctx, [text(step.text)]));
          break;
        case "handoff":
          artifact(
            [...(step.text ? [text(step.text)] : []), data({ relay: { transfer_to: step.to, reason: step.reason } })],
            false,
            true,
          );
          status(TaskState.TASK_STATE_COMPLETED);
          break;
        case "answer": {
          const words = step.text.split(/(?<= )/);
          for (const [i, w] of words.entries()) artifact([text(w)], i > 0, i === words.length - 1);
          status(TaskState.TASK_STATE_COMPLETED);
          break;
        }
      }
      bus.finished();
    },
    async cancelTask() {},
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const transport = new JsonRpcTransportHandler(handler);
  const rpc = http.post(`${base}/rpc`, async ({ request }) => {
    headers = Object.fromEntries(request.headers);
    const body = await request.text();
    const context = new ServerCallContext({ requestedVersion: request.headers.get("A2A-Version") ?? undefined });
    const answer = await transport.handle(body, context);
    if (!(Symbol.asyncIterator in (answer as object))) return HttpResponse.json(answer as object);
    const encoder = new TextEncoder();
    const events = answer as AsyncGenerator<unknown>;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await events.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(`data: ${JSON.stringify(next.value)}\n\n`));
      },
    });
    return new HttpResponse(stream, { headers: { "Content-Type": "text/event-stream" } });
  });
  const cardHandler = http.get(`${base}/.well-known/agent-card.json`, async () => {
    const body = options.card ? options.card(card) : AgentCard.toJSON(card);
    if (typeof body === "string") return new HttpResponse(body, { headers: { "Content-Type": "application/json" } });
    return HttpResponse.json(body as object);
  });
  return { handlers: [cardHandler, rpc], received, card };
}

/** A card address that answers after `ms` (a remote agent that never answers in time). */
export const slowCard = (url: string, ms: number): HttpHandler =>
  http.get(url, async () => {
    await delay(ms);
    return HttpResponse.json({});
  });
