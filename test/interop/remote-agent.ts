import type { Server } from "node:http";
import { AgentCard, type Message, type Part, Role, TaskState } from "@a2a-js/sdk";
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  type RequestContext,
} from "@a2a-js/sdk/server";
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import express from "express";

/**
 * A remote agent built the way the A2A JS SDK's samples build one: an AgentExecutor behind
 * DefaultRequestHandler, served by the SDK's Express handlers (JSON-RPC and the card). What
 * it does each turn is scripted: ask for input, answer (in streamed pieces), or hand the
 * conversation back to Relay with Relay's data part.
 */

export type Turn = { ask: string } | { answer: string } | { handBack: string; reason: string; text: string };

export interface RemoteAgent {
  url: string;
  /** What each turn got: its text, its data parts, the task it continued (null: new), its context. */
  received: { text: string; data: unknown[]; metadata: unknown; continued: string | null; contextId: string }[];
  script(...turns: Turn[]): void;
  stop(): Promise<void>;
}

const textPart = (value: string): Part => ({
  content: { $case: "text", value },
  metadata: undefined,
  filename: "",
  mediaType: "",
});

export async function startRemoteAgent(port: number): Promise<RemoteAgent> {
  const url = `http://127.0.0.1:${port}`;
  const turns: Turn[] = [];
  const received: RemoteAgent["received"] = [];
  const card = AgentCard.fromJSON({
    name: "Order Desk",
    description: "Answers questions about orders, in another framework.",
    version: "1.0.0",
    supportedInterfaces: [{ url: `${url}/a2a/jsonrpc`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
    capabilities: { streaming: true },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [{ id: "orders", name: "Orders", description: "Where an order is", tags: ["orders"] }],
  });

  const executor: AgentExecutor = {
    async execute(ctx: RequestContext, bus: ExecutionEventBus) {
      const parts = ctx.userMessage.parts;
      received.push({
        text: parts.flatMap((p) => (p.content?.$case === "text" ? [p.content.value] : [])).join("\n"),
        data: parts.flatMap((p) => (p.content?.$case === "data" ? [p.content.value] : [])),
        metadata: ctx.userMessage.metadata,
        continued: ctx.task?.id ?? null,
        contextId: ctx.contextId,
      });
      const now = () => new Date().toISOString();
      bus.publish(
        AgentEvent.task(
          ctx.task ?? {
            id: ctx.taskId,
            contextId: ctx.contextId,
            status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
            artifacts: [],
            history: [ctx.userMessage],
            metadata: undefined,
          },
        ),
      );
      const status = (state: TaskState, message?: Message) =>
        bus.publish(
          AgentEvent.statusUpdate({
            taskId: ctx.taskId,
            contextId: ctx.contextId,
            status: { state, message, timestamp: now() },
            metadata: undefined,
          }),
        );
      const artifact = (artifactParts: Part[], append: boolean) =>
        bus.publish(
          AgentEvent.artifactUpdate({
            taskId: ctx.taskId,
            contextId: ctx.contextId,
            artifact: {
              artifactId: "reply",
              name: "reply",
              description: "",
              parts: artifactParts,
              metadata: undefined,
              extensions: [],
            },
            append,
            lastChunk: false,
            metadata: undefined,
          }),
        );
      status(TaskState.TASK_STATE_WORKING);
      const turn = turns.shift() ?? { answer: "nothing scripted" };
      if ("ask" in turn) {
        const question: Message = {
          messageId: crypto.randomUUID(),
          contextId: ctx.contextId,
          taskId: ctx.taskId,
          role: Role.ROLE_AGENT,
          parts: [textPart(turn.ask)],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        };
        status(TaskState.TASK_STATE_INPUT_REQUIRED, question);
      } else if ("answer" in turn) {
        for (const [i, word] of turn.answer.split(/(?<= )/).entries()) {
          artifact([textPart(word)], i > 0);
          await new Promise((r) => setTimeout(r, 5));
        }
        status(TaskState.TASK_STATE_COMPLETED);
      } else {
        const data: Part = {
          content: { $case: "data", value: { relay: { transfer_to: turn.handBack, reason: turn.reason } } },
          metadata: undefined,
          filename: "",
          mediaType: "application/json",
        };
        artifact([textPart(turn.text), data], false);
        status(TaskState.TASK_STATE_COMPLETED);
      }
      bus.finished();
    },
    async cancelTask() {},
  };

  const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const app = express();
  app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: requestHandler }));
  app.use("/a2a/jsonrpc", jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(port, "127.0.0.1", () => resolve(s));
  });
  return {
    url,
    received,
    script: (...next) => turns.push(...next),
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
