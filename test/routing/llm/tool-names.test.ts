import { describe, expect, it } from "vitest";
import { assignTransferToolNames, MAX_TOOL_NAME_LENGTH, transferToolName } from "../../../src/routing/llm/tool-names";

describe("transferToolName", () => {
  it("prefixes transfer_to_ and replaces every non-identifier character with _", () => {
    expect(transferToolName("billing")).toBe("transfer_to_billing");
    expect(transferToolName("tech-support")).toBe("transfer_to_tech_support");
    expect(transferToolName("Sales Team/EU")).toBe("transfer_to_sales_team_eu");
    expect(transferToolName("a_b9")).toBe("transfer_to_a_b9");
  });
});

describe("assignTransferToolNames", () => {
  it("gives distinct agents their plain names and maps both ways", () => {
    const names = assignTransferToolNames(["billing", "tech-support"]);
    expect([...names.toolByAgent]).toEqual([
      ["billing", "transfer_to_billing"],
      ["tech-support", "transfer_to_tech_support"],
    ]);
    expect(names.agentByTool.get("transfer_to_tech_support")).toBe("tech-support");
  });

  it("resolves a collision after replacement: the unreplaced name keeps it, the other gets _2", () => {
    const names = assignTransferToolNames(["a-b", "a_b"]);
    expect(names.toolByAgent.get("a_b")).toBe("transfer_to_a_b");
    expect(names.toolByAgent.get("a-b")).toBe("transfer_to_a_b_2");
    expect(names.agentByTool.get("transfer_to_a_b_2")).toBe("a-b");
  });

  it("does not depend on the order agents are listed in", () => {
    const one = assignTransferToolNames(["a-b", "a_b", "x", "a-b-c", "a_b-c", "a-b_c"]);
    const two = assignTransferToolNames(["a-b_c", "x", "a_b", "a_b-c", "a-b", "a-b-c"]);
    expect(new Map([...one.toolByAgent].sort())).toEqual(new Map([...two.toolByAgent].sort()));
    // Three-way collision with no unreplaced name: by name ("-" sorts before "_").
    expect(one.toolByAgent.get("a-b-c")).toBe("transfer_to_a_b_c");
    expect(one.toolByAgent.get("a-b_c")).toBe("transfer_to_a_b_c_2");
    expect(one.toolByAgent.get("a_b-c")).toBe("transfer_to_a_b_c_3");
  });

  it("never hands out a suffixed name that another agent owns plainly", () => {
    const names = assignTransferToolNames(["a-b", "a_b", "a_b_2"]);
    expect(names.toolByAgent.get("a_b_2")).toBe("transfer_to_a_b_2");
    expect(names.toolByAgent.get("a-b")).toBe("transfer_to_a_b_3");
    expect(new Set(names.toolByAgent.values()).size).toBe(3);
  });

  it("caps names at 64 characters and keeps capped names unique", () => {
    const long = "a".repeat(60);
    const names = assignTransferToolNames([`${long}-one`, `${long}-two`]);
    const tools = [...names.toolByAgent.values()];
    for (const tool of tools) expect(tool.length).toBeLessThanOrEqual(MAX_TOOL_NAME_LENGTH);
    expect(new Set(tools).size).toBe(2);
    expect(names.toolByAgent.get(`${long}-one`)).toBe(`transfer_to_${"a".repeat(52)}`);
    expect(names.toolByAgent.get(`${long}-two`)).toBe(`transfer_to_${"a".repeat(50)}_2`);
  });

  it("treats a repeated name as one agent", () => {
    const names = assignTransferToolNames(["billing", "billing"]);
    expect(names.toolByAgent.size).toBe(1);
    expect(names.agentByTool.size).toBe(1);
  });
});
