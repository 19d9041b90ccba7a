import { describe, expect, it } from "vitest";
import { definitionText, storedDefinition } from "../../../src/registry/store";
import { DEFAULT_ROUTING } from "../../../src/routing/config";
import type { LlmOutcome } from "../../../src/routing/hybrid";
import { buildDraftRouter } from "../../../src/routing/replay/draft-router";
import { LLM_TARGET } from "../../../src/routing/replay/outcome";
import { type ReplaySide, replayInputs } from "../../../src/routing/replay/run";
import type { AgentDefinition } from "../../../src/schemas/agent";
import type { RoutingConfig } from "../../../src/schemas/routing";
import { team } from "../router-fixtures";

async function side(agents: readonly AgentDefinition[], config: Partial<RoutingConfig> = {}): Promise<ReplaySide> {
  const built = await buildDraftRouter(
    agents.map((a) => ({ name: a.name, text: definitionText(a) })),
    storedDefinition,
  );
  return { config: { ...DEFAULT_ROUTING, ...config }, rules: built.rules, agents: built.agents };
}

const withSalesRefund = team.map((a) =>
  a.name === "sales"
    ? { ...a, triggers: { ...a.triggers, keywords: [...a.triggers.keywords, "refund"], priority: 100 } }
    : a,
);
const inputs = [
  "why was I charged twice",
  "a refund please",
  "I want a refund for my order",
  "the app crashes when I open it",
  "hmm",
].map((input) => ({ input }));

describe("replayInputs", () => {
  it("a draft built from the same registry decides every input as the current router does", async () => {
    const result = await replayInputs({
      inputs,
      current: await side(team),
      draft: await side(team),
      maxLlmCalls: 0,
      budgetMs: 60_000,
    });
    expect(result.complete).toBe(true);
    expect(result.pairs).toHaveLength(inputs.length);
    for (const p of result.pairs) expect(p.after).toEqual(p.before);
  });

  it("reports what the rules are unsure of as going to the LLM, without calling it", async () => {
    const result = await replayInputs({
      inputs: [{ input: "hmm" }],
      current: await side(team),
      draft: await side(team, { threshold: 100 }),
      maxLlmCalls: 0,
      budgetMs: 60_000,
    });
    expect(result.pairs[0]!.after).toMatchObject({ target: LLM_TARGET, wouldAskLlm: true, fallback: false });
    expect(result.llmCalls).toBe(0);
  });

  it("with the rule strategy an unsure input goes to the fallback, not the LLM", async () => {
    const result = await replayInputs({
      inputs: [{ input: "hmm" }],
      current: await side(team, { strategy: "rule" }),
      draft: await side(team, { strategy: "rule" }),
      maxLlmCalls: 0,
      budgetMs: 60_000,
    });
    expect(result.pairs[0]!.before).toMatchObject({ target: "@fallback", fallback: true, wouldAskLlm: false });
  });

  it("calls the LLM tier at most maxLlmCalls times over both sides, with each side's agents", async () => {
    const asked: string[][] = [];
    const llm = async ({ agents }: ReplaySide): Promise<LlmOutcome> => {
      asked.push(agents.map((a) => a.name));
      return {
        ok: true,
        agent: "sales",
        reason: "",
        tool_call: { name: "transfer_to_sales", arguments: {} },
        duration_ms: 1,
      };
    };
    const result = await replayInputs({
      inputs: [{ input: "hmm" }, { input: "hmm again" }],
      current: await side(team, { threshold: 100 }),
      draft: await side(
        team.filter((a) => a.name !== "technical"),
        { threshold: 100 },
      ),
      llm,
      maxLlmCalls: 3,
      budgetMs: 60_000,
    });
    expect(result.llmCalls).toBe(3);
    expect(asked[1]).not.toContain("technical");
    expect(result.pairs.map((p) => [p.before.target, p.after.target])).toEqual([
      ["sales", "sales"],
      ["sales", LLM_TARGET],
    ]);
  });

  it("a draft that adds a keyword moves the inputs it wins, and only those", async () => {
    const result = await replayInputs({
      inputs,
      current: await side(team),
      draft: await side(withSalesRefund),
      maxLlmCalls: 0,
      budgetMs: 60_000,
    });
    const moved = result.pairs.filter((p) => p.before.target !== p.after.target);
    expect(moved.map((p) => [p.input, p.before.target, p.after.target])).toEqual([
      ["a refund please", "billing", "sales"],
    ]);
  });

  it("stops starting inputs once the time budget is spent, and says so", async () => {
    let now = 0;
    const result = await replayInputs({
      inputs: Array.from({ length: 100 }, (_, i) => ({ input: `refund ${i}` })),
      current: await side(team),
      draft: await side(team),
      maxLlmCalls: 0,
      budgetMs: 150,
      now: () => (now += 100),
    });
    expect(result.complete).toBe(false);
    expect(result.pairs.length).toBeLessThan(100);
    expect(result.pairs.length).toBeGreaterThan(0);
  });
});
