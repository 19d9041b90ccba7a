/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { checkAgentFiles, formatProblems, problemReason } from "../../scripts/lib/agent-check";
import { RelayError } from "../../src/errors";

// The demo team, as `npm run dev` and `npm run agents:push` read it.
const demo = import.meta.glob("../../agents/*.md", { query: "?raw", import: "default", eager: true }) as Record<
  string,
  string
>;
const demoFiles = Object.entries(demo).map(([path, text]) => ({ file: path.split("/").at(-1)!, text }));

const agentFile = (name: string, extra = "") =>
  `---\nname: ${name}\ndescription: Agent ${name}.\n${extra}---\nYou are ${name}.\n`;

describe("checking agent files before anything is sent", () => {
  it("accepts the demo team: every agent, no problem", () => {
    const { agents, problems } = checkAgentFiles(demoFiles);
    expect(problems).toEqual([]);
    expect(agents.map((a) => a.name).sort()).toEqual(["billing", "sales", "supervisor", "technical", "triage"]);
  });

  it("reports every invalid file, each as one line naming the file and the reason, and keeps the valid ones apart", () => {
    const { agents, problems } = checkAgentFiles([
      { file: "ok.md", text: agentFile("ok") },
      { file: "bare.md", text: "just some text\n" },
      { file: "yaml.md", text: "---\nname: [unclosed\n---\nbody\n" },
      { file: "schema.md", text: "---\nname: Not A Slug\ntriggers: { priority: 9999 }\n---\nbody\n" },
      { file: "redos.md", text: agentFile("redos", "triggers:\n  patterns: ['(a)\\1']\n") },
    ]);
    expect(agents.map((a) => a.name)).toEqual(["ok"]);
    expect(problems.map((p) => p.file)).toEqual(["bare.md", "yaml.md", "schema.md", "redos.md"]);
    const lines = formatProblems(problems);
    for (const [i, line] of lines.entries()) {
      expect(line).not.toContain("\n");
      expect(line.startsWith(`${problems[i]!.file}: `)).toBe(true);
      // The file name is said once, at the start, not repeated by the parser's own message.
      expect(line.slice(problems[i]!.file.length)).not.toContain(problems[i]!.file);
    }
    expect(lines[0]).toBe("bare.md: no YAML front matter (the file must start with a '---' line).");
    expect(lines[1]).toMatch(/^yaml\.md: front matter is not valid YAML: \S/);
    expect(lines[1]).not.toMatch(/:$/);
    expect(lines[2]).toMatch(/^schema\.md: not a valid agent definition: name: .+; triggers\.priority: .+/);
    expect(lines[3]).toMatch(/^redos\.md: Agent 'redos': pattern "\(a\)\\\\1" uses a backreference/);
  });

  it("refuses a second file defining an agent name already taken, naming the first", () => {
    const { agents, problems } = checkAgentFiles([
      { file: "a.md", text: agentFile("billing") },
      { file: "b.md", text: agentFile("billing") },
    ]);
    expect(agents).toHaveLength(1);
    expect(formatProblems(problems)).toEqual(["b.md: agent name 'billing' is already defined by a.md"]);
  });

  it("keeps one line for errors that are not the parser's, and for parser messages not starting with the file", () => {
    expect(problemReason(new Error("EISDIR: illegal operation\n    at readFileSync"), "x.md")).toBe(
      "EISDIR: illegal operation",
    );
    expect(problemReason("weird", "x.md")).toBe("weird");
    expect(problemReason(new RelayError("INVALID_AGENT_FILE", "something else.\nmore"), "x.md")).toBe(
      "something else.",
    );
  });
});
