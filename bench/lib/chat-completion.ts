/** What a bench's fake model says: the assistant's message, text or tool calls. */
export interface FakeMessage {
  content: string | null;
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
}

/** What a fake model reports it read and wrote, as OpenAI's `usage` does. */
export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/**
 * A whole (not streamed) OpenAI Chat Completions answer carrying `message`, as the benches'
 * fake models send it: the finish reason follows from the message; usage is nominal unless
 * given (Relay keeps an answer's `completion_tokens` as its stored token count, so a bench
 * whose figures depend on the counts gives the real ones).
 */
export function chatCompletion(
  n: number,
  model: string,
  message: FakeMessage,
  usage: FakeUsage = { prompt_tokens: 10, completion_tokens: 5 },
): string {
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
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  });
}
