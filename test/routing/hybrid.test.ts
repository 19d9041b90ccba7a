import { describe, expect, it } from "vitest";
import { DEFAULT_ROUTING } from "../../src/routing/config";
import { applyFallback } from "../../src/routing/fallback";
import { decideRoute, type LlmOutcome, LOCAL_MODEL } from "../../src/routing/hybrid";
import { NO_DECISION } from "../../src/routing/rule-decision";
import type { RuleDecision, RuleRouter } from "../../src/routing/types";
import { AgentDefinition } from "../../src/schemas/agent";
import type { RoutingConfig } from "../../src/schemas/routing";

const agents = [
  AgentDefinition.parse({ name: "billing", title: "Billing", description: "Money" }),
  AgentDefinition.parse({ name: "technical", description: "Bugs" }),
  AgentDefinition.parse({ name: "retired", enabled: false }),
];

/** A rule tier that always answers the same decision, so the hybrid's own logic is what is tested. */
function fixedRules(decision: Partial<RuleDecision>): RuleRouter {
  const full: RuleDecision = { ...NO_DECISION, ...decision };
  return { decide: () => full, decideInTurns: async () => full, memoryBytes: 0 };
}

function recordingLlm(outcome: LlmOutcome) {
  const calls: string[] = [];
  return {
    calls,
    llm: async (input: string) => {
      calls.push(input);
      return outcome;
    },
  };
}

const llmChose: LlmOutcome = {
  ok: true,
  agent: "technical",
  reason: "bug",
  tool_call: { name: "transfer_to_technical", arguments: { reason: "bug" } },
  duration_ms: 12,
};
const llmTimedOut: LlmOutcome = { ok: false, reason: "timeout", message: "no answer in 3000 ms", duration_ms: 3000 };
const config = (patch: Partial<RoutingConfig> = {}): RoutingConfig => ({ ...DEFAULT_ROUTING, ...patch });

describe("hybrid routing", () => {
  it("trusts the rule tier at confidence ≥ threshold and never calls the LLM", async () => {
    const { calls, llm } = recordingLlm(llmChose);
    const rules = fixedRules({ agent: "billing", confidence: 80, score: 8, matched_keywords: ["refund"] });
    const decision = await decideRoute({ input: "refund", config: config(), rules, agents, llm });
    expect(decision).toMatchObject({ agent: "billing", method: "rule", confidence: 80, matched_keywords: ["refund"] });
    expect(calls).toEqual([]);
    expect(decision.llm).toBeUndefined();
  });

  it("escalates to the LLM when the rule tier is below the threshold", async () => {
    const { calls, llm } = recordingLlm(llmChose);
    const rules = fixedRules({ agent: "billing", confidence: 79.9 });
    const decision = await decideRoute({ input: "it broke", config: config(), rules, agents, llm });
    expect(calls).toEqual(["it broke"]);
    expect(decision).toMatchObject({ agent: "technical", method: "llm", confidence: 79.9 });
    expect(decision.llm).toMatchObject({
      provider: "local",
      model: LOCAL_MODEL,
      tool_call: { name: "transfer_to_technical" },
      duration_ms: 12,
    });
  });

  it("falls back with the LLM's failure as the reason", async () => {
    const { llm } = recordingLlm(llmTimedOut);
    const decision = await decideRoute({
      input: "??",
      config: config({ fallback: "none" }),
      rules: fixedRules({}),
      agents,
      llm,
    });
    expect(decision).toMatchObject({ agent: null, method: "none" });
    expect(decision.fallback?.reason).toContain("timeout");
    expect(decision.llm?.error).toContain("timeout");
  });

  it("never calls the LLM under the rule strategy", async () => {
    const { calls, llm } = recordingLlm(llmChose);
    const decision = await decideRoute({
      input: "x",
      config: config({ strategy: "rule", fallback: "default_agent", default_agent: "billing" }),
      rules: fixedRules({ agent: "technical", confidence: 40 }),
      agents,
      llm,
    });
    expect(calls).toEqual([]);
    expect(decision).toMatchObject({ agent: "billing", method: "fallback", fallback: { strategy: "default_agent" } });
    expect(decision.fallback?.reason).toContain("below the threshold");
  });

  it("always asks the LLM under the llm strategy, even when rules are certain", async () => {
    const { calls, llm } = recordingLlm(llmChose);
    const decision = await decideRoute({
      input: "refund",
      config: config({ strategy: "llm" }),
      rules: fixedRules({ agent: "billing", confidence: 100 }),
      agents,
      llm,
    });
    expect(calls).toHaveLength(1);
    expect(decision.method).toBe("llm");
  });
});

describe("the tiers' timings", () => {
  /** A rule tier that takes `ms` on the given clock to decide. */
  function timedRules(clock: { t: number }, ms: number, decision: Partial<RuleDecision>): RuleRouter {
    const full: RuleDecision = { ...NO_DECISION, ...decision };
    return {
      decide: () => full,
      decideInTurns: async () => {
        clock.t += ms;
        return full;
      },
      memoryBytes: 0,
    };
  }

  it("times the rule tier in µs on the clock it is given, whatever the tiers decide", async () => {
    const clock = { t: 1000 };
    const now = () => clock.t;
    const sure = timedRules(clock, 0.25, { agent: "billing", confidence: 90 });
    const decided = await decideRoute({
      input: "refund",
      config: config(),
      rules: sure,
      agents,
      llm: async () => llmChose,
      now,
    });
    expect(decided).toMatchObject({ method: "rule", rule_us: 250 });
    // Unsure: the LLM decides, and the rule tier's time is still its own, not the LLM's.
    const unsure = timedRules(clock, 1.5, { agent: "billing", confidence: 10 });
    const escalated = await decideRoute({
      input: "it broke",
      config: config(),
      rules: unsure,
      agents,
      llm: async () => {
        clock.t += 12;
        return llmChose;
      },
      now,
    });
    expect(escalated).toMatchObject({ method: "llm", rule_us: 1500, llm: { duration_ms: 12 } });
  });

  it("has no rule tier time when the rule tier does not run (strategy llm)", async () => {
    const { llm } = recordingLlm(llmChose);
    const rules = fixedRules({ agent: "billing", confidence: 99 });
    const decision = await decideRoute({ input: "x", config: config({ strategy: "llm" }), rules, agents, llm });
    expect(decision.method).toBe("llm");
    expect(decision.rule_us).toBeUndefined();
  });
});

describe("fallback strategies", () => {
  it("prompt_user lists the enabled agents with titles and descriptions", () => {
    const fallback = applyFallback(config({ fallback: "prompt_user" }), agents, "no rule matched");
    expect(fallback.agent).toBeNull();
    expect(fallback.method).toBe("fallback");
    expect(fallback.fallback?.agents).toEqual([
      { name: "billing", title: "Billing", description: "Money" },
      { name: "technical", title: "technical", description: "Bugs" },
    ]);
  });

  it("default_agent names the configured agent", () => {
    const fallback = applyFallback(config({ fallback: "default_agent", default_agent: "technical" }), agents, "r");
    expect(fallback).toMatchObject({ agent: "technical", method: "fallback", fallback: { strategy: "default_agent" } });
  });

  it("default_agent degrades to prompt_user when that agent is missing or disabled", () => {
    const fallback = applyFallback(config({ fallback: "default_agent", default_agent: "retired" }), agents, "r");
    expect(fallback.agent).toBeNull();
    expect(fallback.fallback?.strategy).toBe("prompt_user");
    expect(fallback.fallback?.reason).toContain("retired");
  });

  it("none names no agent", () => {
    expect(applyFallback(config({ fallback: "none" }), agents, "r")).toMatchObject({ agent: null, method: "none" });
  });
});
