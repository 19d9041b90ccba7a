import { describe, expect, it } from "vitest";
import {
  type MatchableAgent,
  matchCapabilities,
  normalizeRequired,
  scoreAgent,
  TAG_WEIGHT,
} from "../../src/collaboration/capability-match";
import { AgentDefinition } from "../../src/schemas/agent";

const cap = (name: string, proficiency: number, tags: string[] = []) => ({ name, proficiency, tags });

const AGENTS: MatchableAgent[] = [
  { name: "billing", capabilities: [cap("Refunds", 0.9, ["payments"]), cap("invoices", 0.7)] },
  { name: "support", capabilities: [cap("refunds", 0.5), cap("shipping", 0.8)] },
  { name: "finance", capabilities: [cap("accounting", 1, ["Invoices", "payments"])] },
  { name: "archive", enabled: false, capabilities: [cap("refunds", 1), cap("invoices", 1)] },
  { name: "nobody", capabilities: [cap("poetry", 1)] },
];

describe("capability matcher", () => {
  it("scores by summed proficiency over the number required, best first", () => {
    const matches = matchCapabilities(AGENTS, ["refunds", "invoices"]);
    expect(matches.map((m) => [m.agent, m.score])).toEqual([
      ["billing", 0.8], // (0.9 + 0.7) / 2
      ["finance", 0.4], // tag: (1 × 0.8) / 2
      ["support", 0.25], // 0.5 / 2
    ]);
    expect(matches[0]).toMatchObject({ matched: ["refunds", "invoices"], missing: [] });
    expect(matches[2]).toMatchObject({ matched: ["refunds"], missing: ["invoices"] });
  });

  it("matches names case-insensitively and reports requirements as spelled", () => {
    const [best] = matchCapabilities(AGENTS, ["  REFUNDS "]);
    expect(best).toMatchObject({ agent: "billing", score: 0.9, matched: ["REFUNDS"] });
    expect(best!.hits).toEqual([{ required: "REFUNDS", capability: "Refunds", via: "name", weight: 0.9 }]);
  });

  it(`counts a tag at the capability's proficiency × ${TAG_WEIGHT}, and a name beats a tag`, () => {
    const agent: MatchableAgent = { name: "x", capabilities: [cap("payments", 0.5), cap("refunds", 1, ["payments"])] };
    // name: 0.5; tag: 1 × 0.8 = 0.8 → the better hit counts.
    expect(scoreAgent(agent, ["payments"]).hits).toEqual([
      { required: "payments", capability: "refunds", via: "tag", weight: 0.8 },
    ]);
    const named: MatchableAgent = { name: "y", capabilities: [cap("payments", 0.9), cap("refunds", 1, ["payments"])] };
    expect(scoreAgent(named, ["payments"]).hits[0]).toMatchObject({ via: "name", weight: 0.9 });
  });

  it("drops disabled, excluded and non-matching agents", () => {
    const names = matchCapabilities(AGENTS, ["refunds"], { exclude: ["SUPPORT"] }).map((m) => m.agent);
    expect(names).toEqual(["billing"]);
    expect(matchCapabilities(AGENTS, ["telepathy"])).toEqual([]);
  });

  it("filters by min_score, inclusive, with rounding that forgives float error", () => {
    expect(matchCapabilities(AGENTS, ["refunds", "invoices"], { min_score: 0.4 }).map((m) => m.agent)).toEqual([
      "billing",
      "finance",
    ]);
    expect(matchCapabilities(AGENTS, ["refunds", "invoices"], { min_score: 0.81 })).toEqual([]);
    // (0.7 + 0.1) / 2 is 0.39999999999999997 in floating point: it still meets 0.4.
    const floaty: MatchableAgent = { name: "f", capabilities: [cap("a", 0.7), cap("b", 0.1)] };
    expect((0.7 + 0.1) / 2).toBeLessThan(0.4);
    expect(matchCapabilities([floaty], ["a", "b"], { min_score: 0.4 })).toMatchObject([{ agent: "f", score: 0.4 }]);
  });

  it("breaks score ties by name", () => {
    const tied: MatchableAgent[] = [
      { name: "zeta", capabilities: [cap("x", 0.5)] },
      { name: "alpha", capabilities: [cap("x", 0.5)] },
      { name: "mid", capabilities: [cap("x", 0.6)] },
    ];
    expect(matchCapabilities(tied, ["x"]).map((m) => m.agent)).toEqual(["mid", "alpha", "zeta"]);
  });

  it("counts duplicate requirements once and ignores blanks", () => {
    expect(normalizeRequired(["Refunds", "refunds", " ", "invoices"])).toEqual(["Refunds", "invoices"]);
    expect(scoreAgent(AGENTS[0]!, ["refunds", "REFUNDS"]).score).toBe(0.9);
    expect(scoreAgent(AGENTS[0]!, []).score).toBe(0);
  });

  it("keeps an agent whose matched capability has proficiency 0 when min_score is 0", () => {
    const zero: MatchableAgent = { name: "z", capabilities: [cap("x", 0)] };
    expect(matchCapabilities([zero], ["x"])).toMatchObject([{ agent: "z", score: 0, matched: ["x"] }]);
    expect(matchCapabilities([zero], ["x"], { min_score: 0.1 })).toEqual([]);
  });

  it("takes parsed agent definitions as they are", () => {
    const agent = AgentDefinition.parse({ name: "ops", capabilities: [{ name: "deploys", tags: ["ci"] }] });
    expect(matchCapabilities([agent], ["ci"])).toMatchObject([{ agent: "ops", score: TAG_WEIGHT }]);
  });
});
