import { describe, expect, it } from "vitest";
import { LocalProvider, lexicalTokens, scoreTools } from "../../src/providers/local";
import type { ChatRequest, ToolSpec } from "../../src/providers/types";

const tool = (name: string, description: string): ToolSpec => ({
  type: "function",
  function: { name, description, parameters: { type: "object" } },
});

const tools = [
  tool("transfer_to_billing", "Hand off to Billing: invoices, refunds and payment problems"),
  tool("transfer_to_tech", "Hand off to Tech Support: crashes, errors, login problems and bugs"),
  tool("transfer_to_sales", "Hand off to Sales: pricing, plans, quotes and upgrades"),
];

const request = (user: string, overrides: Partial<ChatRequest> = {}): ChatRequest => ({
  model: "local",
  messages: [
    { role: "system", content: "You route messages. Refunds, crashes and pricing are all topics." },
    { role: "user", content: user },
  ],
  tools,
  tool_choice: "required",
  ...overrides,
});

const signal = (): AbortSignal => AbortSignal.timeout(5_000);

describe("lexicalTokens", () => {
  it("lower-cases words, drops stopwords and splits tool names on underscores", () => {
    expect(lexicalTokens("I want a REFUND for the Invoice")).toEqual(["want", "refund", "invoice"]);
    expect(lexicalTokens("transfer_to_billing")).toEqual(["transfer", "billing"]);
  });

  it("folds plain English plurals and leaves other words alone", () => {
    expect(lexicalTokens("refunds crashes queries boxes invoices status address bus")).toEqual([
      "refund",
      "crash",
      "query",
      "box",
      "invoice",
      "status",
      "address",
      "bus",
    ]);
  });

  it("makes every CJK character a token, even next to Latin letters", () => {
    expect(lexicalTokens("退款API请求")).toEqual(["退", "款", "api", "请", "求"]);
    expect(lexicalTokens("返金してください")).toContain("返");
  });
});

describe("LocalProvider (not an LLM)", () => {
  it("calls the tool sharing the most specific terms with the last user message", async () => {
    const response = await new LocalProvider().complete(request("The app crashes with an error at login"), signal());
    expect(response.content).toBeNull();
    expect(response.tool_calls).toHaveLength(1);
    expect(response.tool_calls[0]?.name).toBe("transfer_to_tech");
    expect(JSON.parse(response.tool_calls[0]?.arguments ?? "")).toEqual({
      reason: "local lexical match: crash, error, login",
    });
  });

  it("reads only the last user message, not the system prompt or earlier turns", async () => {
    const response = await new LocalProvider().complete(
      request("", {
        messages: [
          { role: "system", content: "crashes crashes crashes" },
          { role: "user", content: "my login crashes" },
          { role: "assistant", content: "ok" },
          { role: "user", content: "actually I need a refund" },
        ],
      }),
      signal(),
    );
    expect(response.tool_calls[0]?.name).toBe("transfer_to_billing");
  });

  it("is deterministic: the same request gives the same answer (each call with an id of its own)", async () => {
    const provider = new LocalProvider();
    const answer = async () => {
      const { tool_calls, ...rest } = await provider.complete(request("pricing for the upgrade plans"), signal());
      return { ...rest, calls: tool_calls.map(({ id: _, ...call }) => call), ids: tool_calls.map((c) => c.id) };
    };
    const first = await answer();
    for (let i = 0; i < 5; i++) {
      const again = await answer();
      expect({ ...again, ids: [] }).toEqual({ ...first, ids: [] });
      expect(again.ids[0]).not.toBe(first.ids[0]);
    }
    expect(first.calls[0]?.name).toBe("transfer_to_sales");
  });

  it("breaks ties by tool order", async () => {
    const twins = [tool("transfer_to_a", "Hand off to A: problems"), tool("transfer_to_b", "Hand off to B: problems")];
    const response = await new LocalProvider().complete(request("problems", { tools: twins }), signal());
    expect(response.tool_calls[0]?.name).toBe("transfer_to_a");
    const reversed = await new LocalProvider().complete(request("problems", { tools: [...twins].reverse() }), signal());
    expect(reversed.tool_calls[0]?.name).toBe("transfer_to_b");
  });

  it("weighs a term several tools share less than a term only one tool has", () => {
    const scores = scoreTools("problems with invoices", tools);
    const billing = scores.find((s) => s.tool === "transfer_to_billing");
    const tech = scores.find((s) => s.tool === "transfer_to_tech");
    expect(billing?.terms).toEqual(["invoice", "problem"]);
    expect(tech?.terms).toEqual(["problem"]);
    expect(billing?.score ?? 0).toBeGreaterThan(tech?.score ?? 0);
  });

  it("matches CJK input against CJK descriptions", async () => {
    const cjk = [tool("transfer_to_billing", "账单和退款"), tool("transfer_to_tech", "技术支持：崩溃和错误")];
    const response = await new LocalProvider().complete(request("我要退款", { tools: cjk }), signal());
    expect(response.tool_calls[0]?.name).toBe("transfer_to_billing");
  });

  it("returns content and no tool call when nothing overlaps", async () => {
    const response = await new LocalProvider().complete(request("hello there, good morning"), signal());
    expect(response.tool_calls).toEqual([]);
    expect(response.content).toContain("no tool");
  });

  it("returns no tool call when tool_choice is none or no tools are offered", async () => {
    expect(
      (await new LocalProvider().complete(request("refund", { tool_choice: "none" }), signal())).tool_calls,
    ).toEqual([]);
    expect((await new LocalProvider().complete(request("refund", { tools: [] }), signal())).tool_calls).toEqual([]);
  });

  it("refuses an already-aborted signal with a timeout error", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(new LocalProvider().complete(request("refund"), controller.signal)).rejects.toMatchObject({
      name: "ProviderError",
      kind: "timeout",
    });
  });
});

describe("LocalProvider on an agent's turn (tool_choice auto)", () => {
  const turn = (messages: ChatRequest["messages"]): ChatRequest => ({
    model: "local",
    messages,
    tools,
    tool_choice: "auto",
  });
  const handedOver = (name: string) => [
    { role: "assistant" as const, content: null, tool_calls: [{ id: `call_${name}`, name, arguments: "{}" }] },
    { role: "tool" as const, tool_call_id: `call_${name}`, content: "Transferred." },
  ];

  it("calls the matching tool for a fresh user message", async () => {
    const response = await new LocalProvider().complete(turn([{ role: "user", content: "I need a refund" }]), signal());
    expect(response.tool_calls.map((c) => c.name)).toEqual(["transfer_to_billing"]);
    // Finished as a model's answer that calls a tool is.
    expect(response.finish_reasons).toEqual(["tool_calls"]);
  });

  it("answers in words, quoting the message, when no tool matches", async () => {
    const response = await new LocalProvider().complete(turn([{ role: "user", content: "good morning" }]), signal());
    expect(response).toEqual({
      tool_calls: [],
      content: "local provider (offline, not a model) answering: “good morning”",
      finish_reasons: ["stop"],
    });
  });

  it("never calls a tool already called since the user's message: the next best one, else an answer", async () => {
    const both = "refund for the login crash";
    const after = await new LocalProvider().complete(
      turn([{ role: "user", content: both }, ...handedOver("transfer_to_billing")]),
      signal(),
    );
    expect(after.tool_calls.map((c) => c.name)).toEqual(["transfer_to_tech"]);
    const done = await new LocalProvider().complete(
      turn([{ role: "user", content: "refund" }, ...handedOver("transfer_to_billing")]),
      signal(),
    );
    expect(done.tool_calls).toEqual([]);
    expect(done.content).toContain("“refund”");
  });

  it("a tool called before the last user message may be called again", async () => {
    const response = await new LocalProvider().complete(
      turn([
        { role: "user", content: "refund" },
        ...handedOver("transfer_to_billing"),
        { role: "user", content: "another refund" },
      ]),
      signal(),
    );
    expect(response.tool_calls.map((c) => c.name)).toEqual(["transfer_to_billing"]);
  });

  it("quotes at most 120 characters of a long message", async () => {
    const response = await new LocalProvider().complete(
      turn([{ role: "user", content: `good ${"morning ".repeat(40)}` }]),
      signal(),
    );
    expect(response.content!.length).toBeLessThan(200);
    expect(response.content).toMatch(/…”$/);
  });
});

describe("the local provider streaming", () => {
  it("hands out the same answer a few words at a time", async () => {
    const req = request("hello there, good morning", { tools: [], tool_choice: "auto" });
    const whole = await new LocalProvider(0).complete(req, signal());
    const deltas: string[] = [];
    const streamed = await new LocalProvider(0).stream(req, signal(), (d) => deltas.push(d));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe(whole.content);
    expect(streamed).toEqual({ ...whole, streamed: true, first_chunk_ms: expect.any(Number) });
  });

  it("times its first piece from the request, before the gaps between pieces", async () => {
    const req = request("hello there, good morning to everyone on the line", { tools: [], tool_choice: "auto" });
    const streamed = await new LocalProvider(40).stream(req, signal(), () => undefined);
    // The answer is there at once: the first piece waits for no gap (the later ones do).
    expect(streamed.first_chunk_ms).toBeGreaterThanOrEqual(0);
    expect(streamed.first_chunk_ms).toBeLessThan(40);
  });

  it("stops at an abort between pieces", async () => {
    const controller = new AbortController();
    const req = request("hello there, good morning to everyone on the line", { tools: [], tool_choice: "auto" });
    const deltas: string[] = [];
    const failed = new LocalProvider(0).stream(req, controller.signal, (d) => {
      deltas.push(d);
      controller.abort();
    });
    await expect(failed).rejects.toMatchObject({ kind: "timeout" });
    expect(deltas).toHaveLength(1);
  });
});
