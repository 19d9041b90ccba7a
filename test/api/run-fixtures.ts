import { countTokens } from "gpt-tokenizer/encoding/cl100k_base";
import { leaveUnreadableLiveEvents, sessionStub } from "../durable-objects/helpers";
import { type FakeReply, fakeOpenAI, type RecordedRequest } from "../fakes/openai";
import { llmServer } from "../fakes/server";

/** Shared by the run tests: a scripted model per agent, and the protocol checks of what Relay sent it. */

/** The agent a request is for: the system message starts "You are '<name>'". */
export function agentOf(req: RecordedRequest): string {
  const system = req.body.messages[0]?.content ?? "";
  return /^You are '([^']+)'/.exec(system)?.[1] ?? "?";
}

/** A fake model that answers each agent from its own script, in order. */
export function script(replies: Record<string, FakeReply[]>) {
  const fake = fakeOpenAI({
    baseUrl: "https://llm.test/v1",
    respond: (req) => {
      const queue = replies[agentOf(req)];
      const next = queue?.shift();
      if (!next) throw new Error(`no scripted reply left for ${agentOf(req)}`);
      return next;
    },
  });
  llmServer.use(fake.handler);
  return fake;
}

/**
 * A fake model whose one answer comes after alpha's session `sessionId` gains two live events
 * this version cannot read (leaveUnreadableLiveEvents): the run's stream meets them mid-run.
 */
export function answerAfterUnreadableEvents(sessionId: string, reply: FakeReply) {
  const fake = fakeOpenAI({
    baseUrl: "https://llm.test/v1",
    respond: async () => {
      await leaveUnreadableLiveEvents(sessionStub("alpha", sessionId).stub, sessionId);
      return reply;
    },
  });
  llmServer.use(fake.handler);
  return fake;
}

/** OpenAI's own rule: every assistant tool call is answered by a tool message, and no tool message is orphaned. */
export function protocolErrors(req: RecordedRequest): string[] {
  const errors: string[] = [];
  const open = new Set<string>();
  for (const m of req.body.messages) {
    if (m.role === "tool") {
      if (!open.delete(m.tool_call_id as string)) errors.push(`orphan tool output ${String(m.tool_call_id)}`);
      continue;
    }
    if (open.size > 0) errors.push(`unanswered calls ${[...open].join(",")} before ${m.role}`);
    open.clear();
    for (const c of (m.tool_calls as { id: string }[] | undefined) ?? []) open.add(c.id);
  }
  if (open.size > 0) errors.push(`unanswered calls ${[...open].join(",")} at the end`);
  return errors;
}

export const toolNames = (req: RecordedRequest) => (req.body.tools ?? []).map((t) => t.function.name).sort();

/**
 * A request's input tokens as it went over the wire, counted as OpenAI's chat format counts
 * them (cl100k_base): independent of Relay's own counts (docs/memory.md, Token accounting).
 */
export function wireInputTokens(req: RecordedRequest): number {
  let tokens = 3;
  for (const m of req.body.messages) {
    tokens += 4 + countTokens(typeof m.content === "string" ? m.content : "");
    const calls = (m.tool_calls as { function: { name: string; arguments: string } }[] | undefined) ?? [];
    for (const c of calls) tokens += 3 + countTokens(c.function.name) + countTokens(c.function.arguments);
  }
  if (req.body.tools?.length) tokens += countTokens(JSON.stringify(req.body.tools));
  return tokens;
}
