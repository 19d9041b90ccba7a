import { describe, expect, it } from "vitest";
import {
  type BuildContextInput,
  buildHandoffContext,
  handoffPreamble,
  PREAMBLE_JSON_LIMIT,
} from "../../src/handoff/context";
import { HandoffContext, HandoffRequest, type HandoffRequestInput, type HistoryItem } from "../../src/schemas/handoff";

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5);

const HISTORY: HistoryItem[] = [
  { id: "1", role: "user", content: "I was charged twice, card 4111 1111 1111 1111" },
  { id: "2", role: "assistant", agent: "triage", content: "Let me check." },
  { id: "3", role: "assistant", content: "{}", type: "tool_call", tool_name: "lookup" },
  { id: "4", role: "tool", content: "found", type: "tool_output", tool_name: "lookup" },
  { id: "5", role: "user", content: "mail me at jo@example.com" },
];

const request = (overrides: Partial<HandoffRequestInput> = {}) =>
  HandoffRequest.parse({
    session_id: "s1",
    source_agent: "triage",
    target_agent: "billing",
    reason: "Refund request",
    ...overrides,
  });

const build = (overrides: Partial<BuildContextInput> = {}) =>
  buildHandoffContext({
    request: request(),
    validated: {
      mode: "transfer",
      source: "triage",
      target: "billing",
      chain: ["triage", "billing"],
      include_context: true,
      filter: {},
    },
    handoff_id: "01HANDOFF",
    now: NOW,
    session_history: HISTORY,
    ...overrides,
  });

describe("buildHandoffContext", () => {
  it("fills every field of the HandoffContext and validates against the schema", () => {
    const context = build({ correlation_id: "corr-1" });
    expect(HandoffContext.parse(context)).toEqual(context);
    expect(context).toEqual({
      from_agent: "triage",
      to_agent: "billing",
      reason: "Refund request",
      summary: null,
      context: {},
      payload: {},
      task: null,
      conversation_history: HISTORY,
      metadata: {
        timestamp: "2026-01-02T03:04:05.000Z",
        handoff_chain: ["triage", "billing"],
        chain_depth: 1,
        correlation_id: "corr-1",
        handoff_id: "01HANDOFF",
        mode: "transfer",
        history_filters: [],
      },
    });
  });

  it("defaults the correlation id to the handoff id", () => {
    expect(build().metadata.correlation_id).toBe("01HANDOFF");
  });

  it("prefers the request's conversation_history to the session's", () => {
    const own: HistoryItem[] = [{ role: "user", content: "from the request" }];
    expect(build({ request: request({ conversation_history: own }) }).conversation_history).toEqual(own);
    expect(build({ session_history: undefined }).conversation_history).toEqual([]);
  });

  it("applies the handoff's filters and records them", () => {
    const context = build({
      validated: {
        mode: "transfer",
        source: "triage",
        target: "billing",
        chain: ["triage", "billing"],
        include_context: true,
        filter: { remove_tool_items: true, max_history: 3, redact_pii: true },
      },
    });
    expect(context.conversation_history.map((i) => i.id)).toEqual(["1", "2", "5"]);
    expect(context.conversation_history[0]!.content).toBe("I was charged twice, card [REDACTED_CARD]");
    expect(context.conversation_history[2]!.content).toBe("mail me at [REDACTED_EMAIL]");
    expect(context.metadata.history_filters).toEqual(["remove_tool_items", "max_history:3", "redact_pii"]);
  });

  it("drops the history when the entry says include_context: false", () => {
    const context = build({
      validated: {
        mode: "transfer",
        source: "triage",
        target: "billing",
        chain: ["triage", "billing"],
        include_context: false,
        filter: { redact_pii: true },
      },
    });
    expect(context.conversation_history).toEqual([]);
    expect(context.metadata.history_filters).toEqual(["include_context:false"]);
  });

  it("copies the request's summary, context, payload and task", () => {
    const context = build({
      request: request({
        summary: "Double charge",
        context: { order: 42 },
        payload: { amount: 10 },
        task: { task_id: "t1", task_state: "in_progress" },
      }),
    });
    expect(context).toMatchObject({
      summary: "Double charge",
      context: { order: 42 },
      payload: { amount: 10 },
      task: { task_id: "t1", task_state: "in_progress" },
    });
  });
});

describe("handoffPreamble", () => {
  it("tells the target who handed over, why, the task, the chain and the history's treatment", () => {
    const context = build({
      request: request({
        summary: "Double charge on May invoice",
        context: { order: 42 },
        task: { task_id: "t1", task_state: { step: 2 } },
      }),
      validated: {
        mode: "transfer",
        source: "triage",
        target: "billing",
        chain: ["triage", "billing"],
        include_context: true,
        filter: { remove_tool_items: true, max_history: 3, redact_pii: true },
      },
    });
    const text = handoffPreamble(context);
    expect(text).toContain("Agent 'triage' has handed the conversation over to you ('billing').");
    expect(text).toContain("Reason: Refund request");
    expect(text).toContain("Summary: Double charge on May invoice");
    expect(text).toContain('Task t1 — state: {\n  "step": 2\n}');
    expect(text).toContain('Context:\n{\n  "order": 42\n}');
    expect(text).not.toContain("Payload:");
    expect(text).toContain("Handoff chain: triage → billing (depth 1).");
    expect(text).toContain("3 earlier conversation items follow; the history was filtered:");
    expect(text).toContain("tool calls and outputs removed");
    expect(text).toContain("at most 3 items kept (the first 2 and the most recent)");
    expect(text).toContain("personal data (cards, SSNs, e-mails, phone numbers) masked");
  });

  it("words a return and an unfiltered or withheld history", () => {
    const back = build({
      validated: {
        mode: "return",
        source: "billing",
        target: "triage",
        chain: ["triage"],
        include_context: true,
        filter: {},
      },
      request: request({
        source_agent: "billing",
        mode: "return",
        target_agent: undefined,
        task: { task_id: "t1", task_state: "done" },
      }),
    });
    const text = handoffPreamble(back);
    expect(text).toContain("Agent 'billing' has returned the conversation to you ('triage').");
    expect(text).toContain("Task t1 — state: done");
    expect(text).toContain("5 earlier conversation items follow.");
    expect(text).not.toContain("filtered");
    const withheld = handoffPreamble(
      build({
        validated: {
          mode: "transfer",
          source: "triage",
          target: "billing",
          chain: ["triage", "billing"],
          include_context: false,
          filter: {},
        },
      }),
    );
    expect(withheld).toContain("The earlier conversation was not passed on");
    const one = handoffPreamble(build({ session_history: [HISTORY[0]!] }));
    expect(one).toContain("1 earlier conversation item follows.");
  });

  it("cuts long JSON blocks", () => {
    const text = handoffPreamble(
      build({ request: request({ payload: { blob: "x".repeat(PREAMBLE_JSON_LIMIT * 2) } }) }),
    );
    expect(text).toContain("… (truncated)");
    expect(text.length).toBeLessThan(PREAMBLE_JSON_LIMIT + 1000);
  });
});
