/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { isRelayError, type RelayError } from "../../src/errors";
import { parseAgentFile } from "../../src/registry/agent-file";
import { checkAgentPatterns } from "../../src/registry/check-agent";

// The demo team exactly as `npm run dev` loads it.
const demo = import.meta.glob("../../agents/*.md", { query: "?raw", import: "default", eager: true }) as Record<
  string,
  string
>;

function refusal(fn: () => unknown): RelayError {
  try {
    fn();
  } catch (error) {
    if (isRelayError(error)) return error;
    throw error;
  }
  throw new Error("expected a RelayError");
}

describe("Markdown agent files", () => {
  it("loads every demo agent: front matter as fields, body as instructions, patterns admitted", () => {
    const agents = Object.entries(demo).map(([path, text]) => parseAgentFile(text, path));
    expect(agents.map((a) => a.name).sort()).toEqual(["billing", "sales", "supervisor", "technical", "triage"]);
    for (const agent of agents) {
      expect(agent.instructions.length).toBeGreaterThan(20);
      expect(() => checkAgentPatterns(agent)).not.toThrow();
      expect(agent.triggers.keywords.some((k) => /[\u4e00-\u9fff]/.test(k))).toBe(true);
    }
    const triage = agents.find((a) => a.name === "triage")!;
    expect(triage.handoffs.map((h) => h.to)).toEqual(["billing", "technical", "sales", "supervisor"]);
    expect(triage.handoffs[3]!.filter).toEqual({
      redact_pii: true,
      max_history: 20,
      remove_tool_items: false,
      history: "full",
    });
    expect(agents.find((a) => a.name === "supervisor")!.kind).toBe("human");
  });

  it("keeps explicit instructions over the body, and accepts CRLF and a BOM", () => {
    const agent = parseAgentFile(
      "\uFEFF---\r\nname: a\r\ninstructions: from the field\r\n---\r\nfrom the body\r\n",
      "a.md",
    );
    expect(agent.instructions).toBe("from the field");
  });

  it("refuses a file without front matter, with bad YAML, a non-mapping, or invalid fields — naming the file", () => {
    expect(refusal(() => parseAgentFile("no front matter", "x.md")).code).toBe("INVALID_AGENT_FILE");
    expect(refusal(() => parseAgentFile("---\nname: [oops\n---\n", "y.md")).message).toContain("y.md");
    expect(refusal(() => parseAgentFile("---\n- a\n- b\n---\n", "z.md")).message).toContain("mapping");
    const invalid = refusal(() => parseAgentFile("---\nname: Not A Slug\ntriggers: { priority: 500 }\n---\n", "w.md"));
    expect(invalid.code).toBe("INVALID_AGENT_FILE");
    expect((invalid.details as { issues: { path: string }[] }).issues.map((i) => i.path).sort()).toEqual([
      "name",
      "triggers.priority",
    ]);
  });

  it("refuses a file whose pattern needs backtracking, and admits one that only looks catastrophic", () => {
    const agent = parseAgentFile("---\nname: bad\ntriggers:\n  patterns: ['(?<=x)y']\n---\n", "bad.md");
    expect(refusal(() => checkAgentPatterns(agent)).code).toBe("INVALID_PATTERN");
    const linear = parseAgentFile("---\nname: fine\ntriggers:\n  patterns: ['(\\w+\\s?)+$']\n---\n", "fine.md");
    expect(() => checkAgentPatterns(linear)).not.toThrow();
  });
});
