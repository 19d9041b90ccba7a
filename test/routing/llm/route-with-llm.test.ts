import { describe, expect, it } from "vitest";
import { LocalProvider } from "../../../src/providers/local";
import { OpenAIProvider } from "../../../src/providers/openai";
import { type ChatProvider, type ChatRequest, type ChatResponse, ProviderError } from "../../../src/providers/types";
import { type LlmRouteOutcome, routeWithLlm } from "../../../src/routing/llm/route-with-llm";
import { AgentDefinition, type AgentDefinitionInput } from "../../../src/schemas/agent";
import {
  answer,
  callTool,
  callTools,
  delayed,
  type FakeReply,
  fakeOpenAI,
  garbage,
  httpError,
  lastUserMessage,
} from "../../fakes/openai";
import { llmServer } from "../../fakes/server";

const agent = (input: AgentDefinitionInput): AgentDefinition => AgentDefinition.parse(input);

const agents = [
  agent({ name: "billing", title: "Billing", description: "Invoices, refunds and payments" }),
  agent({ name: "tech-support", title: "Tech Support", description: "Crashes, errors and login problems" }),
  agent({ name: "legacy", description: "Retired desk for refunds", enabled: false }),
];

const options = { model: "gpt-4.1-mini", timeoutMs: 2_000 };
const openai = (): OpenAIProvider => new OpenAIProvider({ apiKey: "sk-test-123" });

/** Routes `input` through the OpenAI provider against a fake answering `reply`. */
async function routeAgainst(
  reply: FakeReply | ((input: string) => FakeReply),
  input = "I was charged twice",
  timeoutMs = options.timeoutMs,
) {
  const fake = fakeOpenAI({ respond: (req) => (typeof reply === "function" ? reply(lastUserMessage(req)) : reply) });
  llmServer.use(fake.handler);
  const outcome = await routeWithLlm(openai(), agents, input, { ...options, timeoutMs });
  return { outcome, requests: fake.requests };
}

function failed(outcome: LlmRouteOutcome): Extract<LlmRouteOutcome, { ok: false }> {
  expect(outcome.ok).toBe(false);
  return outcome as Extract<LlmRouteOutcome, { ok: false }>;
}

/** A provider that answers or fails as told, for outcomes the wire cannot express. */
const scripted = (complete: (req: ChatRequest, signal: AbortSignal) => Promise<ChatResponse>): ChatProvider => ({
  name: "local",
  complete,
});

describe("routeWithLlm: the request", () => {
  it("sends the router prompt, the user input, one tool per enabled agent and tool_choice required", async () => {
    const { requests } = await routeAgainst(callTool("transfer_to_billing"));
    expect(requests).toHaveLength(1);
    const body = requests[0]?.body;
    expect(body?.model).toBe("gpt-4.1-mini");
    expect(body?.tool_choice).toBe("required");
    expect(body?.tools?.map((t) => t.function.name)).toEqual(["transfer_to_billing", "transfer_to_tech_support"]);
    expect(body?.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(body?.messages[0]?.content).toContain("tool transfer_to_tech_support");
    expect(body?.messages[0]?.content).not.toContain("legacy");
    expect(body?.messages[1]?.content).toBe("I was charged twice");
    expect(requests[0]?.authorization).toBe("Bearer sk-test-123");
  });

  it("does not call the provider when no agent is enabled", async () => {
    const fake = fakeOpenAI();
    llmServer.use(fake.handler);
    const outcome = await routeWithLlm(openai(), [agents[2] as AgentDefinition], "refund", options);
    expect(failed(outcome).reason).toBe("no_tool_call");
    expect(fake.requests).toHaveLength(0);
  });
});

describe("routeWithLlm: outcomes", () => {
  it("ok: the called tool's agent, with reason, context and the call", async () => {
    const { outcome } = await routeAgainst(
      callTool("transfer_to_tech_support", { reason: " login fails ", context: "since Monday" }),
      "cannot log in",
    );
    expect(outcome).toMatchObject({
      ok: true,
      agent: "tech-support",
      reason: "login fails",
      context: "since Monday",
      tool_call: { name: "transfer_to_tech_support", arguments: { reason: " login fails ", context: "since Monday" } },
    });
  });

  it("ok: the model's choice follows the input (the fake decides from the request)", async () => {
    const pick = (input: string): FakeReply =>
      callTool(input.includes("crash") ? "transfer_to_tech_support" : "transfer_to_billing");
    expect((await routeAgainst(pick, "the app crashes")).outcome).toMatchObject({ ok: true, agent: "tech-support" });
    expect((await routeAgainst(pick, "refund please")).outcome).toMatchObject({ ok: true, agent: "billing" });
  });

  it("ok: a null or empty context is left out", async () => {
    for (const context of [null, "", "   "]) {
      const { outcome } = await routeAgainst(callTool("transfer_to_billing", { reason: "money", context }));
      expect(outcome.ok).toBe(true);
      expect(outcome).not.toHaveProperty("context");
    }
  });

  it("ok: the first of several tool calls wins", async () => {
    const { outcome } = await routeAgainst(
      callTools(
        { name: "transfer_to_tech_support", arguments: { reason: "first" } },
        { name: "transfer_to_billing", arguments: { reason: "second" } },
      ),
    );
    expect(outcome).toMatchObject({ ok: true, agent: "tech-support", reason: "first" });
  });

  it("ok: even when a later call is broken", async () => {
    const { outcome } = await routeAgainst(
      callTools({ name: "transfer_to_billing" }, { name: "transfer_to_nobody", arguments: "{" }),
    );
    expect(outcome).toMatchObject({ ok: true, agent: "billing" });
  });

  it("timeout: a delayed upstream past timeoutMs", async () => {
    const { outcome } = await routeAgainst(delayed(2_000, callTool("transfer_to_billing")), "refund", 50);
    const failure = failed(outcome);
    expect(failure.reason).toBe("timeout");
    expect(failure.message).toContain("timed out");
  });

  it("timeout: enforced even when the provider ignores its signal", async () => {
    const stuck = scripted(() => new Promise<ChatResponse>(() => {}));
    expect(failed(await routeWithLlm(stuck, agents, "refund", { ...options, timeoutMs: 50 })).reason).toBe("timeout");
  });

  it.each([500, 429])("http_error: HTTP %i", async (status) => {
    const failure = failed((await routeAgainst(httpError(status))).outcome);
    expect(failure.reason).toBe("http_error");
    expect(failure.message).toContain(`HTTP ${status}`);
    expect(failure).not.toHaveProperty("tool_call");
  });

  it("network_error: the upstream cannot be reached", async () => {
    const broken = scripted(() => Promise.reject(new ProviderError("network", "openai: connection refused")));
    const failure = failed(await routeWithLlm(broken, agents, "refund", options));
    expect(failure).toMatchObject({ reason: "network_error", message: "openai: connection refused" });
  });

  it("malformed_response: garbage instead of a completion", async () => {
    expect(failed((await routeAgainst(garbage())).outcome).reason).toBe("malformed_response");
  });

  it("no_tool_call: the model only talks, and what it said is quoted", async () => {
    const failure = failed((await routeAgainst(answer("Could you tell me more?"))).outcome);
    expect(failure.reason).toBe("no_tool_call");
    expect(failure.message).toContain("Could you tell me more?");
  });

  it("unknown_agent: a tool that was not offered (a disabled agent's, or invented)", async () => {
    for (const name of ["transfer_to_legacy", "transfer_to_sales"]) {
      const failure = failed((await routeAgainst(callTool(name, { reason: "guess" }))).outcome);
      expect(failure.reason).toBe("unknown_agent");
      expect(failure.tool_call).toEqual({ name, arguments: { reason: "guess" } });
      expect(failure.message).toContain("transfer_to_billing");
    }
  });

  it("unknown_agent wins over malformed arguments", async () => {
    expect(failed((await routeAgainst(callTool("transfer_to_sales", "{"))).outcome).reason).toBe("unknown_agent");
  });

  it.each([
    ["invalid JSON", '{"reason": "unterminated', '{"reason": "unterminated'],
    ["no reason", "{}", {}],
    ["an empty reason", '{"reason": "  "}', { reason: "  " }],
    ["a reason that is not a string", '{"reason": 42}', { reason: 42 }],
    ["a context that is not a string", '{"reason": "r", "context": 7}', { reason: "r", context: 7 }],
    ["an array", "[]", []],
  ])("malformed_arguments: %s", async (_label, raw, recorded) => {
    const failure = failed((await routeAgainst(callTool("transfer_to_billing", raw))).outcome);
    expect(failure.reason).toBe("malformed_arguments");
    expect(failure.tool_call).toEqual({ name: "transfer_to_billing", arguments: recorded });
  });

  it("propagates an error that is no provider failure (a bug), instead of hiding it", async () => {
    const buggy = scripted(() => Promise.reject(new TypeError("undefined is not a function")));
    await expect(routeWithLlm(buggy, agents, "refund", options)).rejects.toThrow(TypeError);
  });
});

describe("routeWithLlm with the local provider (offline)", () => {
  it("routes by lexical overlap with no network", async () => {
    const outcome = await routeWithLlm(new LocalProvider(), agents, "I need a refund for this invoice", options);
    expect(outcome).toMatchObject({ ok: true, agent: "billing", reason: "local lexical match: invoice, refund" });
  });

  it("never picks a disabled agent and says no_tool_call when nothing overlaps", async () => {
    expect(failed(await routeWithLlm(new LocalProvider(), agents, "retired desk", options)).reason).toBe(
      "no_tool_call",
    );
  });
});
