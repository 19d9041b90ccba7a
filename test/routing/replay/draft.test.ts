import { describe, expect, it } from "vitest";
import { isRelayError } from "../../../src/errors";
import { applyDraft } from "../../../src/routing/replay/draft";
import { AgentDefinition } from "../../../src/schemas/agent";
import { ReplayDraft } from "../../../src/schemas/replay";
import { team } from "../router-fixtures";

const agent = (name: string, keywords: string[]) => AgentDefinition.parse({ name, triggers: { keywords } });
const draft = (d: unknown) => ReplayDraft.parse(d);

function refusal(run: () => unknown): { code: string; details: unknown } {
  try {
    run();
  } catch (error) {
    if (isRelayError(error)) return { code: error.code, details: error.details };
    throw error;
  }
  throw new Error("not refused");
}

describe("applyDraft", () => {
  it("replaces, adds and removes agents, in name order", () => {
    const out = applyDraft(
      team,
      draft({ agents: [agent("sales", ["refund"]), agent("alpha", ["x"])], remove: ["archive"] }),
    );
    expect(out.map((a) => a.name)).toEqual(["alpha", "billing", "sales", "technical"]);
    expect(out.find((a) => a.name === "sales")!.triggers.keywords).toEqual(["refund"]);
  });

  it("leaves the current definitions alone", () => {
    const before = JSON.stringify(team);
    applyDraft(team, draft({ agents: [agent("billing", [])], remove: ["sales"] }));
    expect(JSON.stringify(team)).toBe(before);
  });

  it("refuses an agent named twice, or both written and removed", () => {
    expect(refusal(() => applyDraft(team, draft({ agents: [agent("x", []), agent("x", [])] })))).toMatchObject({
      code: "VALIDATION_FAILED",
      details: { issues: [{ path: "draft.agents.1.name" }] },
    });
    expect(refusal(() => applyDraft(team, draft({ agents: [agent("sales", [])], remove: ["sales"] })))).toMatchObject({
      code: "VALIDATION_FAILED",
      details: { issues: [{ path: "draft.remove.0" }] },
    });
  });

  it("refuses to remove an agent the registry does not hold", () => {
    expect(refusal(() => applyDraft(team, draft({ remove: ["nobody"] })))).toEqual({
      code: "AGENT_NOT_FOUND",
      details: { agent: "nobody" },
    });
  });
});
