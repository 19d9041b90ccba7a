/** What a bench's fake model says: the assistant's message, text or tool calls. */
export interface FakeMessage {
  content: string | null;
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
}

/**
 * A whole (not streamed) OpenAI Chat Completions answer carrying `message`, as the benches'
 * fake models send it: the finish reason follows from the message, usage is nominal.
 */
export function chatCompletion(n: number, model: string, message: FakeMessage): string {
  return JSON.stringify({
    id: `chatcmpl-${n}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", ...message },
        finish_reason: message.tool_calls ? "tool_calls" : "stop",
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });
}
