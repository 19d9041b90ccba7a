import { describe, expect, it } from "vitest";
import {
  callStepMs,
  callsStepMs,
  HANDOFF_STEP_MS,
  RESUME_MARGIN_MS,
  resumeAt,
  turnStepMs,
} from "../../src/runtime/run-deadlines";
import { turnsTaken } from "../../src/runtime/run-recovery";

const registry = {
  tools: new Map([["crm", { timeout_s: 12 }]]),
  agents: new Map([
    ["billing", { kind: "llm" as const, timeout_s: 20 }],
    ["hook", { kind: "webhook" as const }],
  ]),
};

describe("when a run a restart interrupted is resumed", () => {
  it("after its step's own deadline and the margin", () => {
    expect(resumeAt(1_000, 3_000)).toBe(1_000 + 3_000 + RESUME_MARGIN_MS);
    expect(resumeAt(1_000)).toBe(1_000 + RESUME_MARGIN_MS);
    expect(HANDOFF_STEP_MS).toBeGreaterThan(0);
  });

  it("a turn may take the agent's timeout (30 s for a webhook, 60 s for a model, by default)", () => {
    expect(turnStepMs({ kind: "webhook", timeout_s: 3 })).toBe(3_000);
    expect(turnStepMs({ kind: "webhook" })).toBe(30_000);
    expect(turnStepMs({ kind: "llm" })).toBe(60_000);
  });

  it("a tools step may take the longest of its calls", () => {
    const http = { kind: "http" as const, name: "crm", arguments: "{}" };
    const ask = { kind: "ask" as const, name: "ask_agent", arguments: JSON.stringify({ agent: "billing" }) };
    const fanOut = {
      kind: "fan_out" as const,
      name: "fan_out",
      arguments: JSON.stringify({ tasks: [{ agent: "billing", instruction: "x" }] }),
    };
    expect(callStepMs(http, registry)).toBe(12_000);
    expect(callStepMs(ask, registry)).toBe(25_000);
    expect(callStepMs(fanOut, registry)).toBe(60_000 + 10_000);
    expect(callStepMs({ kind: "notify", name: "notify_agent", arguments: "{}" }, registry)).toBe(15_000);
    expect(callsStepMs([http, ask], registry)).toBe(25_000);
    expect(callsStepMs([], registry)).toBe(0);
  });
});

describe("turnsTaken", () => {
  it("does not count a turn a restart interrupted: it is taken again under its number", () => {
    expect(turnsTaken(3, "turn")).toBe(2);
    expect(turnsTaken(3, "tools")).toBe(3);
    expect(turnsTaken(0, "turn")).toBe(0);
    expect(turnsTaken(2, null)).toBe(2);
  });
});
